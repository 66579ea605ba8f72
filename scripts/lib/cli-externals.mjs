// The packages the command line's bundle leaves out (scripts/bundle-cli.mjs) and loads from
// node_modules when first needed; the image keeps only these and what they depend on
// (scripts/prune-image.mjs --cli-externals), since everything else is inside the bundle.
// pdfkit and pdf-parse read font and worker files beside their own code, and only PDF requests use
// them; pino-pretty serves a terminal only; pdf.js may load the native canvas; iconv-lite is half a
// megabyte of encoding tables, loaded only when a body is first decoded.
export const CLI_EXTERNALS = ['pdfkit', 'pdf-parse', 'pino-pretty', '@napi-rs/canvas', 'iconv-lite'];
