// `npm run test:quick`: the suite for the inner loop, without the type check and without the files
// that take longest (each spawns the command line, a browser or a child process, or runs fast-check
// properties over every operation). Run the whole `npm test` before you push: CI does.
import base from './jest.config.js';

const SLOW = [
  'cli', 'cli-commands', 'code-cache', 'pdf-without-canvas', 'prune-image', 'docs-examples', // spawn node
  'disk-full', 'memory-budget-process', // a child process under a mount namespace or a small heap
  'inspector', 'hosted', 'landing', // headless Chromium
  'refused-writes.property', 'storable', 'wall', 'memory-budget', 'fuzz', // properties over every operation
  'stream-bounds', 'stream', 'slow-clients', // hundreds of streams or real sockets with megabytes unread
];

export default {
  ...base,
  testPathIgnorePatterns: [...base.testPathIgnorePatterns, ...SLOW.map((name) => `<rootDir>/test/${name.replace('.', '\\.')}\\.test\\.ts$`)],
};
