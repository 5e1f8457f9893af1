/**
 * The leading comments of proto elements, read from the descriptor set with source info that
 * `scripts/generate-api.sh` embeds (`gen/source-info.ts`), since the generated code's descriptors
 * carry none. Paths follow `descriptor.proto`: messages 4 (nested 3), fields 2, enums 5 (nested 4),
 * enum values 2, services 6, methods 2.
 */
import { fromBinary, type DescEnum, type DescField, type DescMessage, type DescMethod, type DescService } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema, type DescriptorProto, type EnumDescriptorProto } from '@bufbuild/protobuf/wkt';
import { SOURCE_INFO_FILE_DESCRIPTOR_SET } from '../gen/source-info';

/** Any element that can carry a comment. */
export type Commented = DescMessage | DescField | DescEnum | DescService | DescMethod;

/** Element key → comment text (trimmed; undefined when absent). */
export type CommentLookup = (desc: Commented) => string | undefined;

function keyOf(desc: Commented): string {
  switch (desc.kind) {
    case 'field':
      return `${desc.parent.typeName}#${desc.name}`;
    case 'rpc':
      return `${desc.parent.typeName}/${desc.name}`;
    default:
      return desc.typeName;
  }
}

/** The comments of every element of the embedded descriptor set. */
export function embeddedComments(): CommentLookup {
  const set = fromBinary(FileDescriptorSetSchema, Buffer.from(SOURCE_INFO_FILE_DESCRIPTOR_SET, 'base64'));
  const comments = new Map<string, string>();
  for (const file of set.file) {
    const byPath = new Map((file.sourceCodeInfo?.location ?? []).map((l) => [l.path.join('.'), l.leadingComments.trim()]));
    const add = (key: string, path: number[]) => {
      const text = byPath.get(path.join('.'));
      if (text) comments.set(key, text);
    };
    const addEnum = (e: EnumDescriptorProto, prefix: string, path: number[]) => add(`${prefix}.${e.name}`, path);
    const addMessage = (m: DescriptorProto, prefix: string, path: number[]) => {
      const name = `${prefix}.${m.name}`;
      add(name, path);
      m.field.forEach((f, i) => add(`${name}#${f.name}`, [...path, 2, i]));
      m.nestedType.forEach((n, i) => addMessage(n, name, [...path, 3, i]));
      m.enumType.forEach((e, i) => addEnum(e, name, [...path, 4, i]));
    };
    file.messageType.forEach((m, i) => addMessage(m, file.package, [4, i]));
    file.enumType.forEach((e, i) => addEnum(e, file.package, [5, i]));
    file.service.forEach((s, i) => {
      add(`${file.package}.${s.name}`, [6, i]);
      s.method.forEach((m, j) => add(`${file.package}.${s.name}/${m.name}`, [6, i, 2, j]));
    });
  }
  return (desc) => comments.get(keyOf(desc));
}
