// Types of scripts/fuzz/hostile-values.mjs for the Jest tests.
import type { Arbitrary } from 'fast-check';

export type HostileJson =
  | { kind: 'deep'; depth: number; object: boolean }
  | { kind: 'huge'; chars: number; unit: string }
  | { kind: 'keys'; entries: Array<[string, unknown]>; nested: boolean; merge: boolean }
  | { kind: 'numeral'; text: string };
export type HostileYaml =
  | { kind: 'cyclic'; spot: number; ancestor: number }
  | { kind: 'bomb'; fan: number; levels: number; leaf: number }
  | { kind: 'yamlScalar'; text: string };

export const PROTOTYPE_NAMES: string[];
export const prototypeKey: Arbitrary<string>;
export const oddNumeral: Arbitrary<string>;
export const hostileJson: Arbitrary<HostileJson>;
export const hostileYaml: Arbitrary<HostileYaml>;
export function deepText(depth: number, object: boolean): string;
export function hostileJsonText(value: HostileJson, replaced?: unknown): string;
export function valueAt(value: unknown, path: Array<string | number>): unknown;
export function describeHostile(value: HostileJson | HostileYaml): string;
export function spotsOf(value: unknown): Array<Array<string | number>>;
export function jsonWithText(base: unknown, path: Array<string | number>, text: string): string;
export function yamlWith(base: unknown, path: Array<string | number>, value: HostileYaml): string;
export function yamlValue(text: string): unknown;
