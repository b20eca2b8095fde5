// CSS modules (esbuild's local-css loader): class names scoped to their component.
declare module "*.module.css" {
  const classes: Record<string, string>;
  export default classes;
}
