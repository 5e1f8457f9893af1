import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { causesOf } from '../../bench/cpu-profile-causes';

/** A frame of a hand-written profile: function name and script (a built file of the operator or a library). */
const frame = (functionName: string, url = '') => ({ functionName, url, lineNumber: 0 });

/**
 * A profile of one tree: root → transport.js `deliver` → JSON.parse (watch decoding);
 * root → reconcile → status.js → transport.js `request` (a write under status rendering: the innermost
 * cause wins, so a write); root → reconcile → pino (logging); (idle) and (garbage collector).
 */
function writeProfile(samples: number[], deltasUs: number[]): string {
  const b = 'file:///w/build';
  const nodes = [
    { id: 1, callFrame: frame('(root)'), children: [2, 4, 8, 9] },
    { id: 2, callFrame: frame('deliver', `${b}/lib/runtime/kube/transport.js`), children: [3, 10] },
    { id: 3, callFrame: frame('parse') },
    { id: 4, callFrame: frame('reconcile', `${b}/lib/runtime/rayservice/reconciler.js`), children: [5, 7] },
    { id: 5, callFrame: frame('renderStatus', `${b}/lib/runtime/rayservice/status.js`), children: [6] },
    { id: 6, callFrame: frame('request', `${b}/lib/runtime/kube/transport.js`) },
    { id: 7, callFrame: frame('write', 'file:///w/node_modules/pino/lib/proto.js') },
    { id: 8, callFrame: frame('(idle)') },
    { id: 9, callFrame: frame('(garbage collector)') },
    // The client's watch line handler (anonymous) under the transport's splitter, parsing the event.
    { id: 10, callFrame: frame('', `${b}/lib/runtime/kube/client.js`), children: [11] },
    { id: 11, callFrame: frame('parse') },
  ];
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cpuprof-')), 'p.cpuprofile');
  const startTime = 1_000_000;
  fs.writeFileSync(file, JSON.stringify({ nodes, startTime, endTime: startTime + deltasUs.reduce((a, x) => a + x, 0), samples, timeDeltas: deltasUs }));
  return file;
}

describe('causesOf', () => {
  test('each sample is charged to the innermost frame that names a cause; idle is left out', () => {
    // Samples 1 ms apart; each is charged the gap to the next one (the last: nothing).
    const file = writeProfile([3, 11, 6, 7, 8, 9, 5, 3], [0, 1000, 1000, 1000, 1000, 1000, 1000, 1000]);
    const b = causesOf(file);
    expect(Object.fromEntries(b.ms)).toEqual({
      'watch decoding': 2 + 0, // samples 3 and 11 (a client.js frame, but called by the splitter); the last sample has no successor
      'API requests (writes and reads)': 1,
      'logging (pino)': 1,
      '(garbage collector)': 1,
      'status rendering': 1,
    });
    expect(b.totalMs).toBe(6);
  });

  test('windows keep the samples whose wall time (the profile ends at the exit time) falls inside one', () => {
    // 4 samples at +0, +10, +20, +30 ms of a 30 ms profile that ended at wall 10_030.
    const file = writeProfile([3, 6, 7, 3], [0, 10_000, 10_000, 10_000]);
    const b = causesOf(file, 10_030, [{ from: 10_005, to: 10_025 }]);
    expect(Object.fromEntries(b.ms)).toEqual({ 'API requests (writes and reads)': 10, 'logging (pino)': 10 });
  });
});
