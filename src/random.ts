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

/** The character codes of the hex digits. */
const HEX = [...'0123456789abcdef'].map((c) => c.charCodeAt(0));
/** Where a hex text is spelt before fromCharCode makes it a string (reused: nothing is allocated per text). */
const codes: number[] = [0, 0, 0, 0, 0, 0, 0, 0];

/**
 * An unsigned 32-bit integer as 8 hex digits. Spelt from a table, not by toString(16): V8 formats a
 * number in base 16 by its general radix conversion, some 0.3 us a call, and padStart copies again.
 */
function hex8(x: number): string {
  for (let i = 7; i >= 0; i--) {
    codes[i] = HEX[x & 15];
    x >>>= 4;
  }
  return String.fromCharCode(codes[0], codes[1], codes[2], codes[3], codes[4], codes[5], codes[6], codes[7]);
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
      while (out.length < length) out += hex8(Math.floor(next() * 0x100000000));
      return out.length === length ? out : out.slice(0, length);
    },
  };
}
