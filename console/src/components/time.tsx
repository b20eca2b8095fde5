const FORMAT = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });

/** A timestamp in the reader's locale, its ISO value kept machine-readable. */
export function Time({ value }: { value: string | null | undefined }) {
  if (!value) return <>—</>;
  return <time dateTime={value}>{FORMAT.format(new Date(value))}</time>;
}
