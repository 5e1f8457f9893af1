import * as fc from 'fast-check';
import { parse } from 'yaml';
import { toPlainYaml } from '../../lib/spec/plain-yaml';
import { serializeServeConfig } from '../../lib/spec/serve-config';

describe('toPlainYaml', () => {
  test('a YAML parser reads back exactly the JSON value written, for thousands of random objects', () => {
    const objects = fc.dictionary(fc.string(), fc.jsonValue()).map((o) => JSON.parse(JSON.stringify(o)) as Record<string, unknown>);
    fc.assert(
      fc.property(objects, (value) => {
        expect(parse(toPlainYaml(value))).toEqual(value);
      }),
      { numRuns: 3000 },
    );
  });

  test('strings that YAML would read as something else are quoted', () => {
    const tricky = { a: 'yes', b: 'null', c: '123', d: 'x: y', e: '#c', f: ' lead', g: 'k:', h: '', i: 'true', j: '-' };
    const yaml = toPlainYaml(tricky);
    for (const v of Object.values(tricky)) expect(yaml).toContain(JSON.stringify(v));
    expect(parse(yaml)).toEqual(tricky);
  });

  test('Serve configs read naturally: import paths and route prefixes stay unquoted', () => {
    const yaml = serializeServeConfig({ applications: [{ name: 'llm', importPath: 'ray.serve.llm:build_openai_app', routePrefix: '/' }] });
    expect(yaml).toBe('applications:\n- name: llm\n  route_prefix: /\n  import_path: ray.serve.llm:build_openai_app\n');
  });

  test('values that JSON cannot carry are refused, not written wrongly', () => {
    expect(() => toPlainYaml({ n: Number.NaN })).toThrow('cannot write NaN to YAML');
    expect(() => toPlainYaml({ f: () => 1 })).toThrow('cannot write a function to YAML');
  });
});
