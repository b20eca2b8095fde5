/** `items` in consecutive slices of at most `size`. */
export function* chunksOf<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}
