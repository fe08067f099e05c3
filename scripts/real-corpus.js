// `node scripts/real-corpus.js [DIR] [--packages a,b,c]`: builds the real-document corpus of
// `npm run bench -- --real DIR` from Debian 12 documentation packages: files nobody on the
// project wrote (PDF manuals, HTML and text documentation, a few DOCX/PPTX templates). It runs
// `apt-get download` (no install, no root needed beyond what apt wants for its lists), unpacks
// each package with `dpkg-deb -x`, keeps /usr/share, decompresses `.gz` files and drops
// symbolic links (Samba would refuse those leaving the share; smbclient and Sluice must see the
// same files). Nothing of it is committed. Idempotent: a package already unpacked is kept.
// Needs `apt-get update` once before the first run.
"use strict";
const { execFileSync, spawnSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const zlib = require("node:zlib");

/**
 * Debian 12 packages chosen for real PDFs (LaTeX package manuals, the R manuals, gnuplot),
 * HTML (PostgreSQL, Python, Maxima, the Debian reference) and text, with the few DOCX/PPTX of
 * pandoc's and python-docx's templates. About 3,000+ files and 300+ MB unpacked.
 */
const PACKAGES = [
  "texlive-latex-base-doc",
  "texlive-latex-recommended-doc",
  "texlive-humanities-doc",
  "r-doc-pdf",
  "gnuplot-doc",
  "postgresql-doc-15",
  "python3.11-doc",
  "maxima-doc",
  "debian-reference-en",
  "debian-reference-common",
  "pandoc-data",
  "python3-docx",
];

function parseArgs(argv) {
  const args = { dir: path.join(os.homedir(), ".cache", "sluice-real-corpus"), packages: PACKAGES };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--packages") args.packages = argv[++i].split(",").filter(Boolean);
    else if (argv[i] === "--help") {
      process.stdout.write("usage: node scripts/real-corpus.js [DIR] [--packages a,b,c]\n");
      process.exit(0);
    } else args.dir = path.resolve(argv[i]);
  }
  return args;
}

function need(command) {
  if (spawnSync("sh", ["-c", `command -v ${command}`]).status !== 0) {
    process.stderr.write(`real-corpus: ${command} is not installed (apt-get install ${command === "dpkg-deb" ? "dpkg" : "apt"})\n`);
    process.exit(1);
  }
}

/** Decompresses every `name.gz` under dir into `name`, and removes every symbolic link. */
function normalise(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) fs.rmSync(full);
    else if (entry.isDirectory()) normalise(full);
    else if (entry.name.endsWith(".gz")) {
      const target = full.slice(0, -3);
      try {
        if (!fs.existsSync(target)) fs.writeFileSync(target, zlib.gunzipSync(fs.readFileSync(full)));
        fs.rmSync(full);
      } catch {
        // not gzip after all: kept as it is
      }
    }
  }
}

/** Files and bytes by lower-case extension ("none" without one). */
function census(dir, out = new Map()) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) census(full, out);
    else if (entry.isFile()) {
      const dot = entry.name.lastIndexOf(".");
      const type = dot > 0 ? entry.name.slice(dot + 1).toLowerCase() : "none";
      const t = out.get(type) ?? { files: 0, bytes: 0 };
      t.files += 1;
      t.bytes += fs.statSync(full).size;
      out.set(type, t);
    }
  }
  return out;
}

function main() {
  const { dir, packages } = parseArgs(process.argv.slice(2));
  need("apt-get");
  need("dpkg-deb");
  const debs = path.join(dir, "debs");
  const files = path.join(dir, "files");
  // Outside files/: the corpus holds only the packages' own files.
  const markers = path.join(dir, "unpacked");
  for (const d of [debs, files, markers]) fs.mkdirSync(d, { recursive: true });
  // apt's sandbox user must be able to write the download directory.
  fs.chmodSync(debs, 0o777);
  for (const name of packages) {
    const target = path.join(files, name);
    if (fs.existsSync(target) && fs.existsSync(path.join(markers, name))) {
      process.stdout.write(`${name}: already unpacked\n`);
      continue;
    }
    let deb = fs.readdirSync(debs).find((f) => f.startsWith(`${name}_`) && f.endsWith(".deb"));
    if (!deb) {
      process.stdout.write(`${name}: apt-get download...\n`);
      const got = spawnSync("apt-get", ["download", name], { cwd: debs, stdio: ["ignore", "inherit", "inherit"] });
      if (got.status !== 0) {
        process.stderr.write(`${name}: apt-get download failed (run apt-get update first; is the package in Debian 12?)\n`);
        process.exit(1);
      }
      deb = fs.readdirSync(debs).find((f) => f.startsWith(`${name}_`) && f.endsWith(".deb"));
    }
    const unpacked = path.join(dir, "unpack-tmp");
    fs.rmSync(unpacked, { recursive: true, force: true });
    execFileSync("dpkg-deb", ["-x", path.join(debs, deb), unpacked]);
    fs.rmSync(target, { recursive: true, force: true });
    const share = path.join(unpacked, "usr", "share");
    if (fs.existsSync(share)) fs.renameSync(share, target);
    else fs.mkdirSync(target);
    fs.rmSync(unpacked, { recursive: true, force: true });
    normalise(target);
    fs.writeFileSync(path.join(markers, name), "");
    process.stdout.write(`${name}: unpacked\n`);
  }
  // Packages unpacked earlier but no longer asked for are left out of the corpus.
  for (const name of fs.readdirSync(files)) if (!packages.includes(name)) fs.rmSync(path.join(files, name), { recursive: true, force: true });
  const counts = census(files);
  const rows = [...counts].sort((a, b) => b[1].bytes - a[1].bytes);
  const total = rows.reduce((t, [, c]) => ({ files: t.files + c.files, bytes: t.bytes + c.bytes }), { files: 0, bytes: 0 });
  process.stdout.write(`\ncorpus: ${files}\n${total.files} files, ${(total.bytes / 1024 / 1024).toFixed(1)} MB\n`);
  for (const [type, c] of rows.slice(0, 15)) process.stdout.write(`  ${type.padEnd(8)} ${String(c.files).padStart(6)} files ${(c.bytes / 1024 / 1024).toFixed(1).padStart(8)} MB\n`);
  if (rows.length > 15) process.stdout.write(`  (${rows.length - 15} more types)\n`);
  process.stdout.write(`\nrun: npm run bench -- --real ${files}\n`);
}

main();
