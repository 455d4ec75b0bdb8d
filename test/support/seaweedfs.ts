import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, requireTool, startProcess, type ManagedProcess } from '../../scripts/infra/processes';
import { until } from './until';

/** A SeaweedFS S3 server the test started, with the one identity allowed in. */
export interface S3Server {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Its data folder (volumes and the filer's store), to look at what it wrote to disk. */
  dataDir: string;
  stop(): Promise<void>;
}

/**
 * SeaweedFS (Apache-2.0; `install-tools.sh s3` builds `weed`), a real S3-compatible server:
 * `weed mini` (master, volume, filer and S3 gateway in one process) on free ports, in a
 * temporary folder, with an S3 config file naming one identity (access key, secret key, all
 * actions), so that unsigned or wrongly signed requests are refused as AWS would.
 */
export async function startS3Server(): Promise<S3Server> {
  const weed = requireTool('weed');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'seaweedfs-'));
  const accessKeyId = 'recordings-test';
  const secretAccessKey = 'recordings-test-secret-key-0123456789';
  const configFile = path.join(dataDir, 's3.json');
  fs.writeFileSync(
    configFile,
    JSON.stringify({
      identities: [
        { name: 'recordings', credentials: [{ accessKey: accessKeyId, secretKey: secretAccessKey }], actions: ['Admin', 'Read', 'List', 'Tagging', 'Write'] },
      ],
    }),
  );
  const ports = {
    master: await freePort(),
    volume: await freePort(),
    filer: await freePort(),
    s3: await freePort(),
    webdav: await freePort(),
    admin: await freePort(),
  };
  const proc: ManagedProcess = startProcess({
    name: 'seaweedfs',
    command: weed,
    args: [
      'mini',
      `-dir=${dataDir}`,
      '-ip=127.0.0.1',
      '-ip.bind=127.0.0.1',
      `-master.port=${ports.master}`,
      `-volume.port=${ports.volume}`,
      `-filer.port=${ports.filer}`,
      `-s3.port=${ports.s3}`,
      `-s3.config=${configFile}`,
      '-s3.port.iceberg=0',
      '-s3.port.lance=0',
      `-webdav=false`,
      `-webdav.port=${ports.webdav}`,
      '-admin.ui=false',
      `-admin.port=${ports.admin}`,
      '-admin.port.legacy=0',
      '-master.telemetry=false',
    ],
    output: { file: path.join(dataDir, 'weed.log') },
  });
  const endpoint = `http://127.0.0.1:${ports.s3}`;
  // Ready when the S3 gateway answers (403 or 200 both mean it is up: it needs a signature).
  await until(
    async () => {
      if (proc.child.exitCode !== null) throw new Error(`weed exited early; see ${path.join(dataDir, 'weed.log')}`);
      return fetch(endpoint).then(
        (res) => res.status,
        () => 0,
      );
    },
    (status) => status > 0,
    120_000,
  );
  return {
    endpoint,
    accessKeyId,
    secretAccessKey,
    dataDir,
    async stop() {
      await proc.stop(5_000);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
