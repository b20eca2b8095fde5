import { createHash } from "node:crypto";

/** A deterministic random stream: the same seed parts always yield the same sequence. */
export interface Random {
  /** A number in [0, 1). */
  fraction(): number;
  /** An integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  shuffle<T>(items: readonly T[]): T[];
  hex(length: number): string;
}

export function seededRandom(...seedParts: string[]): Random {
  // NUL-joined so ("ab", "c") and ("a", "bc") are different seeds.
  const seed = seedParts.join("\0");
  let counter = 0;

  // Counter-mode SHA-256 rather than a classic PRNG: no magic constants to get wrong, and the
  // simulator draws only a few hundred numbers per scan.
  const fraction = (): number =>
    createHash("sha256").update(`${seed}\0${counter++}`).digest().readUInt32BE(0) / 2 ** 32;

  const int = (min: number, max: number): number => min + Math.floor(fraction() * (max - min + 1));

  return {
    fraction,
    int,
    pick<T>(items: readonly T[]): T {
      if (items.length === 0) throw new RangeError("Cannot pick from an empty list");
      return items[int(0, items.length - 1)] as T;
    },
    shuffle<T>(items: readonly T[]): T[] {
      return items
        .map((item) => ({ item, order: fraction() }))
        .sort((a, b) => a.order - b.order)
        .map(({ item }) => item);
    },
    hex(length: number): string {
      return Array.from({ length }, () => int(0, 15).toString(16)).join("");
    },
  };
}
