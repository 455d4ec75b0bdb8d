import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';

/**
 * The README is short and points into docs/; these tests keep every pointer true: each relative
 * link in README.md and docs/**\/*.md names a file that exists and, for `#anchor` links into
 * markdown, a heading that GitHub gives that anchor; and the decision index lists every record.
 */

const root = path.resolve(__dirname, '..', '..');

/** A markdown file's lines outside fenced code blocks (a `# comment` in a shell block is no heading). */
function proseLines(markdown: string): string[] {
  const lines: string[] = [];
  let fence: string | null = null;
  for (const line of markdown.split('\n')) {
    const opener = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (opener) {
      if (fence === null) fence = opener[1];
      else if (line.trim().startsWith(fence)) fence = null;
      continue;
    }
    if (fence === null) lines.push(line);
  }
  return lines;
}

/** The heading's text as GitHub renders it: links and images as their text, no code ticks, emphasis or tags. */
function renderedText(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '');
}

/** GitHub's anchor for a heading (github-slugger): lower case, punctuation dropped, spaces as hyphens. */
function githubSlug(heading: string): string {
  return renderedText(heading)
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a markdown file offers: one per heading, repeats numbered `-1`, `-2` as GitHub does. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = githubSlug(heading[1]);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** The targets of a file's inline links and images, outside code blocks and code spans. */
function linkTargets(markdown: string): string[] {
  const targets: string[] = [];
  for (const line of proseLines(markdown)) {
    const prose = line.replace(/`[^`]*`/g, '``');
    for (const match of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(match[1]);
  }
  return targets;
}

/** The repository's documentation: README.md and every markdown file under docs/. */
function documentationFiles(base: string): string[] {
  const files = [path.join(base, 'README.md')];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.md')) files.push(full);
    }
  };
  walk(path.join(base, 'docs'));
  return files.filter((file) => fs.existsSync(file));
}

/** Each relative link of the documentation under `base` that leads nowhere, as `file: target (why)`. */
function brokenLinks(base: string): string[] {
  const broken: string[] = [];
  const anchorCache = new Map<string, Set<string>>();
  const anchors = (file: string): Set<string> => {
    let found = anchorCache.get(file);
    if (!found) anchorCache.set(file, (found = anchorsOf(fs.readFileSync(file, 'utf8'))));
    return found;
  };
  for (const file of documentationFiles(base)) {
    const name = path.relative(base, file);
    for (const target of linkTargets(fs.readFileSync(file, 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: and the like: not ours to check
      const [rawPath, fragment] = target.split('#', 2);
      const decoded = decodeURIComponent(rawPath);
      const resolved = decoded === '' ? file : decoded.startsWith('/') ? path.join(base, decoded) : path.resolve(path.dirname(file), decoded);
      if (!fs.existsSync(resolved)) {
        broken.push(`${name}: ${target} (no such file)`);
        continue;
      }
      if (fragment !== undefined && resolved.endsWith('.md') && !anchors(resolved).has(decodeURIComponent(fragment))) {
        broken.push(`${name}: ${target} (no heading with that anchor in ${path.relative(base, resolved)})`);
      }
    }
  }
  return broken;
}

/** The records in docs/decisions/ that its index does not link exactly once, as `file (why)`. */
function unindexedDecisions(base: string): string[] {
  const dir = path.join(base, 'docs', 'decisions');
  const index = fs.readFileSync(path.join(dir, 'README.md'), 'utf8');
  // The index's rows link each record by its file name (the status column may link others too):
  // count the links that open a row's title column.
  const listed = [...index.matchAll(/^\| \d{4} \| \[[^\]]*\]\(([^)#]+)\)/gm)].map((match) => match[1]);
  const problems: string[] = [];
  for (const record of fs.readdirSync(dir).filter((entry) => entry.endsWith('.md') && entry !== 'README.md')) {
    const times = listed.filter((entry) => entry === record).length;
    if (times !== 1) problems.push(`${record} (listed ${times} times)`);
  }
  return problems;
}

describe('docs links', () => {
  it('every relative link in README.md and docs/ reaches an existing file, and every #anchor a heading', () => {
    expect(brokenLinks(root)).to.deep.equal([]);
  });

  it('every decision record is in the decision index exactly once', () => {
    expect(unindexedDecisions(root)).to.deep.equal([]);
  });

  describe('the checks themselves', () => {
    let base: string;
    beforeEach(() => {
      base = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-links-'));
      fs.mkdirSync(path.join(base, 'docs', 'decisions'), { recursive: true });
    });
    afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

    it('take anchors as GitHub makes them', () => {
      expect(githubSlug('Checking the providers: `npm run check:providers`')).to.equal('checking-the-providers-npm-run-checkproviders');
      expect(githubSlug("Callers' data in Temporal")).to.equal('callers-data-in-temporal');
      expect(githubSlug('Keypad digits (DTMF)')).to.equal('keypad-digits-dtmf');
      expect(githubSlug("Issue 18: cost per delivery, against Temporal's floor")).to.equal('issue-18-cost-per-delivery-against-temporals-floor');
      expect([...anchorsOf('# A\n## Setup\n```sh\n# not a heading\n```\n### Setup\n')]).to.deep.equal(['a', 'setup', 'setup-1']);
    });

    it('find a missing file, a missing heading and a link into a code span not at all', () => {
      fs.writeFileSync(
        path.join(base, 'README.md'),
        '# Top\n\n[ok](docs/guide.md#usage) [gone](docs/nothing.md) [self](#top) [bad](#nowhere) `[code](missing.md)`\n',
      );
      fs.writeFileSync(
        path.join(base, 'docs', 'guide.md'),
        '# Guide\n\n## Usage\n\n[back](../README.md#top) [wrong](../README.md#usage) [web](https://example.com/x.md)\n',
      );
      expect(brokenLinks(base)).to.deep.equal([
        'README.md: docs/nothing.md (no such file)',
        'README.md: #nowhere (no heading with that anchor in README.md)',
        'docs/guide.md: ../README.md#usage (no heading with that anchor in README.md)',
      ]);
    });

    it('find a record missing from the index, and one listed twice', () => {
      for (const record of ['0001-a.md', '0002-b.md', '0003-c.md']) fs.writeFileSync(path.join(base, 'docs', 'decisions', record), '# x\n');
      fs.writeFileSync(
        path.join(base, 'docs', 'decisions', 'README.md'),
        '| number | title |\n|---|---|\n| 0001 | [A](0001-a.md) |\n| 0002 | [B](0002-b.md) |\n| 0002 | [B again](0002-b.md) |\n',
      );
      expect(unindexedDecisions(base)).to.deep.equal(['0002-b.md (listed 2 times)', '0003-c.md (listed 0 times)']);
    });
  });
});
