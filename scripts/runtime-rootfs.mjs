// Used by the Dockerfile's `runtime` stage: assembles the root file system the image runs on, FROM
// scratch: this node binary with its symbol tables stripped, the C and C++ libraries it loads, the
// users root and node (1000), /tmp, /home/node and /data (the node user's), and nothing else: no
// shell, no npm, no package manager. The sandbox starts no other program, and the HEALTHCHECK is node.
//
//   node scripts/runtime-rootfs.mjs DEST
//
// The libraries are the ones this very process has loaded, by the names the dynamic loader found
// them under (process.report), so the list is node's own on whatever base the build ran on.
// The binary's symbol tables (.symtab, about 14 MB of the official build) serve debuggers only;
// the dynamic symbols that native addons link against stay. `strip` comes from binutils: without it
// the binary is copied whole, with a warning.
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, existsSync, lstatSync, mkdirSync, readlinkSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const NODE_USER = { uid: 1000, gid: 1000 };

const dest = process.argv[2];
if (!dest) {
  console.error('usage: node scripts/runtime-rootfs.mjs DEST');
  process.exit(2);
}
const root = resolve(dest);
const at = (path) => join(root, path);

// A usr-merged base (Debian since 12) has /lib, /bin... as links into /usr: the same links here, so
// the loader path written in the binary (/lib64/ld-linux-x86-64.so.2) and the library paths resolve.
for (const top of ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32']) {
  const path = `/${top}`;
  if (existsSync(path) && lstatSync(path).isSymbolicLink() && !existsSync(at(top))) {
    const target = readlinkSync(path);
    mkdirSync(resolve(root, target.replace(/^\//, '')), { recursive: true });
    symlinkSync(target, at(top));
  }
}

function install(from, to, mode) {
  mkdirSync(dirname(at(to)), { recursive: true });
  copyFileSync(from, at(to)); // follows links: the file itself, under the name it is loaded by
  chmodSync(at(to), mode);
}

const libraries = process.report.getReport().sharedObjects.filter((path) => path.startsWith('/'));
for (const library of libraries) install(library, library, 0o755);

const node = '/usr/local/bin/node';
install(process.execPath, node, 0o755);
const before = statSync(at(node)).size;
try {
  execFileSync('strip', ['--strip-all', at(node)], { stdio: ['ignore', 'ignore', 'pipe'] });
} catch (error) {
  console.warn(`runtime-rootfs: node kept unstripped (${error.code === 'ENOENT' ? 'no strip here: install binutils' : String(error.stderr ?? error.message).trim()})`);
}
const after = statSync(at(node)).size;

mkdirSync(at('etc'), { recursive: true });
writeFileSync(at('etc/passwd'), `root:x:0:0:root:/root:/usr/sbin/nologin\nnode:x:${NODE_USER.uid}:${NODE_USER.gid}::/home/node:/usr/sbin/nologin\n`);
writeFileSync(at('etc/group'), `root:x:0:\nnode:x:${NODE_USER.gid}:\n`);
// Host names: /etc/hosts first, then DNS (the container runtime supplies both files).
writeFileSync(at('etc/nsswitch.conf'), 'passwd: files\ngroup: files\nhosts: files dns\n');

mkdirSync(at('tmp'), { recursive: true });
chmodSync(at('tmp'), 0o1777);
mkdirSync(at('root'), { recursive: true, mode: 0o700 });
for (const owned of ['home/node', 'data']) {
  mkdirSync(at(owned), { recursive: true });
  chownSync(at(owned), NODE_USER.uid, NODE_USER.gid);
}

const mb = (bytes) => (bytes / 1e6).toFixed(1);
console.log(`runtime-rootfs: ${root}: node ${process.version} (${mb(before)} MB, ${mb(after)} MB stripped) and ${libraries.length} libraries: ${libraries.join(', ')}`);
