import mongoose from 'mongoose';
import { expect } from 'chai';

/**
 * The embedded FerretDB reads only the named document for any filter with an `_id` equality,
 * as MongoDB does with its `_id` index (scripts/install-tools.sh, patch_ferretdb_id_pushdown).
 * Unpatched, only a filter of `_id` alone was narrowed: a guarded write such as a media node's
 * claim of a call (`_id`, no node yet, not final) read every call. The results must stay
 * exactly MongoDB's: the other conditions still decide.
 */
describe('FerretDB filters naming an _id', () => {
  type Doc = { _id: string; status: string; node?: string | null };
  const collection = () => mongoose.connection.db!.collection<Doc>(`id_pushdown_${Date.now()}_${Math.random().toString(36).slice(2)}`);

  it('reads only the named document when the filter has other conditions too (explain: filterPushdown)', async () => {
    const docs = collection();
    await docs.insertMany(Array.from({ length: 20 }, (_, i) => ({ _id: `call-${i}`, status: 'ringing', node: null })));
    const explained = (await docs.find({ _id: 'call-7', node: null, status: { $nin: ['completed', 'failed'] } }).explain()) as { filterPushdown?: boolean };
    expect(explained.filterPushdown, 'FerretDB narrowed the query to the _id').to.equal(true);
  });

  it('still applies every other condition: a guarded update changes the document only when they hold', async () => {
    const docs = collection();
    await docs.insertMany([
      { _id: 'a', status: 'ringing', node: null },
      { _id: 'b', status: 'completed', node: null },
      { _id: 'c', status: 'ringing', node: 'node-1' },
    ]);
    const claim = (_id: string) => docs.updateOne({ _id, node: null, status: { $nin: ['completed', 'failed'] } }, { $set: { node: 'node-2' } });
    expect((await claim('a')).modifiedCount, 'live and unclaimed').to.equal(1);
    expect((await claim('a')).modifiedCount, 'claimed already').to.equal(0);
    expect((await claim('b')).modifiedCount, 'final').to.equal(0);
    expect((await claim('c')).modifiedCount, 'another node').to.equal(0);
    expect((await claim('missing')).modifiedCount, 'no such document').to.equal(0);
    expect(await docs.find({}).sort({ _id: 1 }).toArray()).to.deep.equal([
      { _id: 'a', status: 'ringing', node: 'node-2' },
      { _id: 'b', status: 'completed', node: null },
      { _id: 'c', status: 'ringing', node: 'node-1' },
    ]);
  });

  it('answers finds, counts, deletes and findOneAndUpdate with an _id and other conditions as MongoDB does', async () => {
    const docs = collection();
    await docs.insertMany([
      { _id: 'x', status: 'queued' },
      { _id: 'y', status: 'ringing' },
    ]);
    expect(await docs.findOne({ _id: 'x', status: 'queued' })).to.deep.equal({ _id: 'x', status: 'queued' });
    expect(await docs.findOne({ _id: 'x', status: 'ringing' })).to.equal(null);
    expect(await docs.findOne({ _id: 'x', $or: [{ status: 'ringing' }, { status: 'queued' }] })).to.deep.equal({ _id: 'x', status: 'queued' });
    expect(await docs.countDocuments({ _id: 'y', status: { $in: ['ringing'] } })).to.equal(1);
    expect(await docs.countDocuments({ _id: 'y', status: 'queued' })).to.equal(0);
    expect(await docs.findOneAndUpdate({ _id: 'y', status: 'queued' }, { $set: { status: 'x' } })).to.equal(null);
    expect(await docs.findOneAndUpdate({ _id: 'y', status: 'ringing' }, { $set: { status: 'in-progress' } }, { returnDocument: 'after' })).to.deep.equal({
      _id: 'y',
      status: 'in-progress',
    });
    expect((await docs.deleteOne({ _id: 'x', status: 'ringing' })).deletedCount).to.equal(0);
    expect((await docs.deleteOne({ _id: 'x', status: 'queued' })).deletedCount).to.equal(1);
    expect(await docs.find({}).toArray()).to.deep.equal([{ _id: 'y', status: 'in-progress' }]);
  });
});
