// Owns the seeded random source. Every random choice the sandbox makes (ids, faker data, scenario
// probabilities) draws from one of these, so that the same seed replays the same run.
import { createHash } from 'node:crypto';

export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max]. */
  int(min: number, max: number): number;
  /** Hex characters drawn from the generator. */
  hex(length: number): string;
}

/** sfc32, seeded from a SHA-256 of the seed text: small, fast and good enough for test data. */
export function createRandom(seed: string): Random {
  const digest = createHash('sha256').update(seed).digest();
  let a = digest.readUInt32LE(0), b = digest.readUInt32LE(4), c = digest.readUInt32LE(8), d = digest.readUInt32LE(12);
  const next = (): number => {
    a >>>= 0; b >>>= 0; c >>>= 0; d >>>= 0;
    const t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    const r = (t + d) | 0;
    c = (c + r) | 0;
    return (r >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) next();
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    hex: (length) => {
      let out = '';
      while (out.length < length) out += Math.floor(next() * 0x100000000).toString(16).padStart(8, '0');
      return out.slice(0, length);
    },
  };
}
