// The packages the command line's bundle leaves out (scripts/bundle-cli.mjs) and loads from
// node_modules when first needed; the image keeps only these and what they depend on
// (scripts/prune-image.mjs --cli-externals), since everything else is inside the bundle.
// pdfkit and pdf-parse read font and worker files beside their own code, and only PDF requests use
// them; pino-pretty serves a terminal only; iconv-lite is half a megabyte of encoding tables, loaded
// only when a body is first decoded.
export const CLI_EXTERNALS = ['pdfkit', 'pdf-parse', 'pino-pretty', 'iconv-lite'];

// Packages the image leaves out although a kept package depends on them. pdf-parse requires the
// native canvas (30 MB with its platform binary), which pdf.js uses to render and to supply a
// DOMMatrix; the sandbox only reads text and defines DOMMatrix itself (src/ocr/ocr.ts), so pdf.js
// runs without it.
export const NOT_IN_IMAGE = ['@napi-rs/canvas'];
