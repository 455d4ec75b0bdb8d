import mongoose from 'mongoose';
import { expect } from 'chai';

/**
 * The embedded FerretDB applies each update to its document atomically, as MongoDB does
 * (scripts/install-tools.sh, patch_ferretdb_update_lock). Unpatched, it reads, changes and
 * writes back whole documents, and concurrent updates of one document lose each other's
 * changes: a call's status written beside its media node, a ledger head moved by two writers.
 */
describe('FerretDB updates of one document at once', () => {
  const collection = () =>
    mongoose.connection.db!.collection<{ _id: string; a?: number; b?: number; c?: number; n?: number }>(`concurrent_updates_${Date.now()}`);

  it('keeps every field set by concurrent updateOne calls', async () => {
    const docs = collection();
    const ids = Array.from({ length: 100 }, (_, i) => `doc-${i}`);
    await docs.insertMany(ids.map((_id) => ({ _id })));
    await Promise.all(ids.flatMap((_id) => ['a', 'b', 'c'].map((field) => docs.updateOne({ _id }, { $set: { [field]: 1 } }))));

    const incomplete = (await docs.find({}).toArray()).filter((doc) => doc.a !== 1 || doc.b !== 1 || doc.c !== 1);
    expect(incomplete.map((doc) => doc._id)).to.deep.equal([]);
  });

  it('counts every concurrent $inc, from updateOne and findOneAndUpdate alike', async () => {
    const docs = collection();
    await docs.insertOne({ _id: 'counter', n: 0 });
    await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        i % 2 ? docs.updateOne({ _id: 'counter' }, { $inc: { n: 1 } }) : docs.findOneAndUpdate({ _id: 'counter' }, { $inc: { n: 1 } }),
      ),
    );
    expect((await docs.findOne({ _id: 'counter' }))?.n).to.equal(60);
  });
});
