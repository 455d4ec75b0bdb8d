import mongoose from 'mongoose';

/**
 * Connects mongoose once per process and builds the declared indexes. The same code runs
 * on MongoDB 7 and FerretDB, so it uses neither transactions nor TTL indexes.
 */
export async function connectMongo(uri: string): Promise<typeof mongoose> {
  mongoose.set('strictQuery', true);
  await mongoose.connect(uri, { serverSelectionTimeoutMS: 10_000, autoIndex: false });
  await Promise.all(Object.values(mongoose.models).map((model) => model.createIndexes()));
  return mongoose;
}

export async function disconnectMongo(): Promise<void> {
  await mongoose.disconnect();
}

/** Round-trip time of a `ping`, or the reason it failed. */
export async function pingMongo(): Promise<{ ok: boolean; latency_ms: number; error?: string }> {
  const started = performance.now();
  try {
    const db = mongoose.connection.db;
    if (!db || mongoose.connection.readyState !== 1) throw new Error('not connected');
    await db.admin().command({ ping: 1 });
    return { ok: true, latency_ms: Math.round(performance.now() - started) };
  } catch (err) {
    return { ok: false, latency_ms: Math.round(performance.now() - started), error: (err as Error).message };
  }
}
