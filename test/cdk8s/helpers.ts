/** Helpers of the construct tests: synthesis errors, stderr capture, lookups in synthesized manifests. */
import { Chart, Testing } from 'cdk8s';

/** The message of the error `Testing.synth(chart)` throws; fails the test when it does not throw. */
export function synthError(chart: Chart): string {
  try {
    Testing.synth(chart);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected synthesis to fail, but it succeeded');
}

/** Runs `fn` with `process.stderr.write` captured; returns its result and everything written. */
export function captureStderr<T>(fn: () => T): { result: T; stderr: string } {
  const chunks: string[] = [];
  const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: unknown) => {
    chunks.push(String(chunk));
    return true;
  });
  try {
    return { result: fn(), stderr: chunks.join('') };
  } finally {
    spy.mockRestore();
  }
}

/** The manifests of `kind` in a synthesized chart. */
export function ofKind(manifests: any[], kind: string): any[] {
  return manifests.filter((m) => m.kind === kind);
}

/** The only manifest of `kind`; fails unless there is exactly one. */
export function single(manifests: any[], kind: string): any {
  const found = ofKind(manifests, kind);
  expect(found).toHaveLength(1);
  return found[0];
}
