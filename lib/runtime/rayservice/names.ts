/**
 * Names, labels and annotations of the objects the rayshift operator manages for a RayService.
 * Their home is lib/spec/object-names.ts (the constructs and the API server need them too and may
 * not import the runtime); this module re-exports it for the runtime's callers, with the steering
 * annotations, whose home is the steering rules (lib/engine/steering.ts).
 */
export * from '../../spec/object-names';
export { ABORT_ANNOTATION, PAUSE_ANNOTATION, PROMOTE_ANNOTATION } from '../../engine/steering';
