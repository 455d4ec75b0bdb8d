import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT, TOOLS_DIR } from '../../scripts/infra/processes';

/** scripts/install-tools.sh: idempotent, one progress line per step, clear about what is missing. */
describe('the tools installer', () => {
  const run = (args: string[], env: NodeJS.ProcessEnv) =>
    spawnSync('bash', [path.join(ROOT, 'scripts', 'install-tools.sh'), ...args], { cwd: ROOT, env, encoding: 'utf8' });

  it('skips every tool that is already installed at its pinned version', () => {
    // The root hook's servers came from these tools, so they are installed.
    const result = run([], { ...process.env, TOOLS_DIR });
    expect(result.status, result.stderr).to.equal(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines.slice(0, 3)).to.deep.equal([
      '[tools] temporal CLI v1.5.1: present',
      '[tools] FerretDB v1.24.2: present',
      '[tools] Temporal test server 1.38.0: present',
    ]);
    // promtool: Debian's build where apt had it, else the one built from Prometheus's Go module.
    expect(lines.slice(3)).to.have.length(1);
    expect(lines[3]).to.be.oneOf(['[tools] promtool 2.42.0+ds-5+deb12u1 (Debian): present', '[tools] promtool v0.316.0: present']);
  });

  for (const [tool, missing] of [
    ['temporal', 'go'],
    ['ferretdb', 'go'],
    ['test-server', 'java'],
    ['promtool', 'go'],
  ] as const) {
    it(`names "${missing}" when it is needed for ${tool} and missing`, () => {
      const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'vas-tools-'));
      try {
        const result = run([tool], { PATH: shellOnlyPath(scratch), HOME: scratch, TOOLS_DIR: path.join(scratch, 'tools') });
        expect(result.status).to.equal(1);
        expect(result.stderr).to.match(new RegExp(`error: '${missing}' is missing; it is needed to`));
      } finally {
        fs.rmSync(scratch, { recursive: true, force: true });
      }
    });
  }

  it('builds the cluster profile\'s tools only on request, naming "go" when it is missing', () => {
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'vas-tools-'));
    try {
      // PostgreSQL is checked first; stand-ins let the check pass on machines without it.
      const pgBin = path.join(scratch, 'pg');
      fs.mkdirSync(pgBin);
      for (const program of ['postgres', 'initdb']) fs.writeFileSync(path.join(pgBin, program), '', { mode: 0o755 });
      const result = run(['cluster'], { PATH: shellOnlyPath(scratch), HOME: scratch, TOOLS_DIR: path.join(scratch, 'tools'), PG_BIN: pgBin });
      expect(result.status).to.equal(1);
      expect(result.stdout).to.include(`[tools] PostgreSQL: present (${pgBin})`);
      expect(result.stderr).to.match(/error: 'go' is missing; it is needed to build the Temporal server and its Web UI server/);
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  });

  it('builds SeaweedFS (the S3 tests\' server) only on request, naming "go" when it is missing', () => {
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'vas-tools-'));
    try {
      const result = run(['s3'], { PATH: shellOnlyPath(scratch), HOME: scratch, TOOLS_DIR: path.join(scratch, 'tools') });
      expect(result.status).to.equal(1);
      expect(result.stderr).to.match(/error: 'go' is missing; it is needed to build SeaweedFS, the S3-compatible server of the recordings tests/);
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  });

  /** A PATH holding only the shell utilities the script uses: no go, java or mvn. */
  function shellOnlyPath(scratch: string): string {
    const bin = path.join(scratch, 'bin');
    fs.mkdirSync(bin);
    for (const util of ['bash', 'cat', 'chmod', 'cp', 'dirname', 'mkdir', 'rm', 'sed', 'touch']) {
      const found = ['/usr/bin', '/bin'].map((dir) => path.join(dir, util)).find((file) => fs.existsSync(file));
      if (found) fs.symlinkSync(found, path.join(bin, util));
    }
    return bin;
  }

  it('refuses an unknown tool name with its usage', () => {
    const result = run(['mongodb'], { ...process.env, TOOLS_DIR });
    expect(result.status).to.equal(1);
    expect(result.stderr).to.include("unknown tool 'mongodb'");
  });
});
