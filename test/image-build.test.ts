// The image build (Dockerfile, .dockerignore) as text, where no engine runs: what the build context
// leaves out, the NPM_REGISTRY build argument (empty: npm's default) that every npm ci of the build
// passes on, as sh expands it, and the OCI labels. scripts/container-smoke.sh builds and runs it.
import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const dockerfile = readFileSync('Dockerfile', 'utf8');
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string; license: string; name: string };

/** The Dockerfile's instructions, continuation lines joined, comments left out. */
const instructions = dockerfile.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));

describe('the image build', () => {
  it('leaves local state, reports and mutation-testing leftovers out of the build context', () => {
    const ignored = readFileSync('.dockerignore', 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
    for (const entry of ['reports', '.stryker-tmp', 'node_modules', 'dist', 'coverage', '.env', '.npmrc', '.git']) expect(ignored).toContain(entry);
  });

  it('takes NPM_REGISTRY (default empty) and every npm ci passes it on, in each stage that runs one', () => {
    expect(instructions).toContain('ARG NPM_REGISTRY=');
    const stages = instructions.join('\n').split(/^FROM /m).slice(1);
    const installing = stages.filter((stage) => /\bnpm ci\b/.test(stage));
    expect(installing).toHaveLength(2);
    for (const stage of installing) {
      expect(stage).toMatch(/^ARG NPM_REGISTRY$/m);
      for (const line of stage.split('\n').filter((l) => /\bnpm ci\b/.test(l))) expect(line).toContain('npm ci ${NPM_REGISTRY:+--registry="$NPM_REGISTRY"} ');
    }
    // No registry host is written in the build: the default is npm's own.
    expect(dockerfile).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)/);
  });

  it('the argument expands to nothing when empty and to one --registry argument when set (as sh runs the RUN line)', () => {
    const args = (value: string) => execFileSync('sh', ['-c', 'printf "[%s]" npm ci ${NPM_REGISTRY:+--registry="$NPM_REGISTRY"} --no-audit'], { env: { PATH: process.env.PATH, NPM_REGISTRY: value }, encoding: 'utf8' });
    expect(args('')).toBe('[npm][ci][--no-audit]');
    expect(args('http://mirror.test/npm/ with space')).toBe('[npm][ci][--registry=http://mirror.test/npm/ with space][--no-audit]');
  });

  it('sets the OCI labels on the image it ships, the version and licence being package.json\'s', () => {
    const last = instructions.slice(instructions.map((l) => l.startsWith('FROM ')).lastIndexOf(true));
    const label = last.find((l) => l.startsWith('LABEL '));
    expect(label).toBeDefined();
    const labels = Object.fromEntries([...label!.matchAll(/(org\.opencontainers\.image\.[\w.]+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    expect(labels).toMatchObject({
      'org.opencontainers.image.title': pkg.name,
      'org.opencontainers.image.version': pkg.version,
      'org.opencontainers.image.licenses': pkg.license,
      'org.opencontainers.image.description': expect.stringMatching(/sandbox/),
      'org.opencontainers.image.base.name': '${BASE_IMAGE}',
      'org.opencontainers.image.revision': '${REVISION}',
      'org.opencontainers.image.created': '${CREATED}',
    });
  });
});
