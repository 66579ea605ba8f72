npm ci && npm start          # serves http://127.0.0.1:4010 (demo environment under /demo)
npm test                     # type-check, then the whole test suite
