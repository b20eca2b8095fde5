// Writing the items of a lazy iterable in turn, on one connection, making each next item while
// the previous is written: the JavaScript that builds a chunk of rows and Postgres writing the
// chunk before it then run side by side instead of one after the other.

/** Writes every item in order, one statement at a time; the first failure is thrown. */
export async function writeOverlapped<T>(items: Iterable<T>, write: (item: T) => Promise<unknown>): Promise<void> {
  let writing: Promise<unknown> = Promise.resolve();
  for (const item of items) {
    await writing;
    writing = write(item);
    // Awaited on the next item or below; if making the next item throws first, that error is the one thrown.
    writing.catch(() => {});
  }
  await writing;
}
