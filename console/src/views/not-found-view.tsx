export function NotFoundView() {
  return (
    <>
      <h1 tabIndex={-1}>Page not found</h1>
      <p>
        Nothing here. Go back to the <a href="/">portfolio</a>.
      </p>
    </>
  );
}
