import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT } from '../../scripts/infra/processes';

const SOURCE_FOLDERS = ['api', 'activities', 'config', 'db', 'domain', 'media', 'providers', 'scripts', 'simulators', 'workers', 'workflows'];

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** The project files a file imports (type imports too: they tie the modules together all the same). */
function importsOf(file: string): string[] {
  const code = fs.readFileSync(file, 'utf8');
  const targets: string[] = [];
  for (const [, spec] of code.matchAll(/(?:from|import)\s+['"](\.{1,2}(?:\/[^'"]*)?)['"]/g)) {
    const base = path.resolve(path.dirname(file), spec!);
    const found = [`${base}.ts`, path.join(base, 'index.ts')].find((candidate) => fs.existsSync(candidate));
    if (found) targets.push(found);
  }
  return targets;
}

/** A cycle of imports among the service's modules, as file paths from the root, or null. */
function findImportCycle(files: string[]): string[] | null {
  const graph = new Map(files.map((file) => [file, importsOf(file)]));
  const state = new Map<string, 'open' | 'done'>();
  const trail: string[] = [];
  const visit = (file: string): string[] | null => {
    if (state.get(file) === 'done') return null;
    if (state.get(file) === 'open') return [...trail.slice(trail.indexOf(file)), file];
    state.set(file, 'open');
    trail.push(file);
    for (const next of graph.get(file) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    trail.pop();
    state.set(file, 'done');
    return null;
  };
  for (const file of files) {
    const cycle = visit(file);
    if (cycle) return cycle.map((f) => path.relative(ROOT, f));
  }
  return null;
}

/** No module of the service imports itself through others: layers stay layers (README, "Architecture"). */
describe('imports: no cycles among the service modules', () => {
  it('has none', () => {
    const files = SOURCE_FOLDERS.filter((folder) => fs.existsSync(path.join(ROOT, folder))).flatMap((folder) => sourceFiles(path.join(ROOT, folder)));
    expect(files.length).to.be.above(100);
    expect(findImportCycle(files), JSON.stringify(findImportCycle(files))).to.equal(null);
  });

  it('finds one when there is one', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cycle-probe-'));
    try {
      fs.writeFileSync(path.join(dir, 'a.ts'), "import { b } from './b';\nexport const a = b;\n");
      fs.writeFileSync(path.join(dir, 'b.ts'), "import type { c } from './c';\nexport const b = 1 as unknown as c;\n");
      fs.writeFileSync(path.join(dir, 'c.ts'), "import { a } from './a';\nexport type c = typeof a;\n");
      const cycle = findImportCycle(sourceFiles(dir));
      expect(cycle?.map((f) => path.basename(f))).to.deep.equal(['a.ts', 'b.ts', 'c.ts', 'a.ts']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
