import mongoose from 'mongoose';
import './models';

/**
 * Connects mongoose once per process and builds the declared indexes. The same code runs
 * on MongoDB 7 and FerretDB, so it uses neither transactions nor TTL indexes.
 */
export async function connectMongo(uri: string, options: { monitorCommands?: boolean } = {}): Promise<typeof mongoose> {
  mongoose.set('strictQuery', true);
  // monitorCommands: the driver reports every command's duration (benchmarks time the store with it).
  await mongoose.connect(uri, { serverSelectionTimeoutMS: 10_000, autoIndex: false, ...options });
  await Promise.all(Object.values(mongoose.models).map((model) => model.createIndexes()));
  return mongoose;
}

export async function disconnectMongo(): Promise<void> {
  await mongoose.disconnect();
}
