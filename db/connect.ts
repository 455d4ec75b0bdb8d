import mongoose from 'mongoose';
import './models';

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

