// Type declarations of marionette.mjs (guide: docs/web.md).
export type Vec3 = [number, number, number] | ArrayLike<number>;
export type Quat = [number, number, number, number] | ArrayLike<number>;
export type Status = 'OK' | 'ARG' | 'IO' | 'PARSE' | 'NOMEM' | 'NOTFOUND' | 'SINGULAR' | 'UNREACHABLE' |
  'NOCONVERGE' | 'UNSUPPORTED';
export type IKMethod = 'lm' | 'dls' | 'pinv' | 'jt' | 'ccd' | 'fabrik' | 'analytic' | 'altjac';
export type CSolver = 'lagrange' | 'ccd' | 'dls';
export const IK_METHODS: IKMethod[];
export const CSOLVERS: CSolver[];
export type Interpolation = 'default' | 'constant' | 'linear' | 'slerp' | 'squad' | 'catmull-rom' | 'kb';
export const INTERPOLATIONS: Interpolation[];

export function load(options?: { wasm?: BufferSource | URL | string }): Promise<Marionette>;

export interface Motion { frameTime: number; nframes: number; frames: Float64Array }
export interface JointInfo {
  name: string; parent: number; type: 'fixed' | 'hinge' | 'slide' | 'ball' | 'free';
  qadr: number; dofadr: number; limited: boolean; range: [number, number];
  /** ball: the swing cone's half-angle and the twist range (radians), about axis */
  swing: number; twist: [number, number];
  /** a hinge's or slide's axis, a ball's twist axis (unit, joint frame) */
  axis: [number, number, number];
  /** the Euler order of the joint's BVH rotation channels */
  rotOrder: EulerOrder;
}
export type EulerOrder = 'XYZ' | 'XZY' | 'YXZ' | 'YZX' | 'ZXY' | 'ZYX';
export interface SkinDoc {
  dim?: 2 | 3; vertices: ArrayLike<number>; masses?: ArrayLike<number>; triangles?: number[];
  controllers: { name: string; kind?: 'point' | 'bone' | 'cage'; pivot: Vec3; tail?: Vec3; parent?: number;
    attached?: boolean; joint?: number }[];
  influences: number; weightIndex?: ArrayLike<number>; weight_index?: ArrayLike<number>; weight: ArrayLike<number>;
}

export class Marionette {
  allocations(): { live: number; total: number };
  memoryBytes(): number;
  stickman(): Figure;
  figureFromSkeleton(text: string, name?: string): Figure;
  figureFromBVH(text: string, options?: { scale?: number; name?: string }): Figure;
  /** A figure document read by the command line's reader (errors "name: field: text"). */
  figureFromDocument(doc: object | string, name?: string): Figure;
  /** A sequence document of figure read by the command line's reader; its "figure" is kept, not read. */
  sequenceFromDocument(figure: Figure, doc: object | string, name?: string): Sequence;
  /** What a scene document holds. */
  sceneFromDocument(doc: object | string, name?: string): {
    frames: number; solver: CSolver | null; iterations: number; root: string | null;
    figures: { name: string; file: string; sequence: string | null; position: number[]; rotation: number[] }[];
  };
  /** A constraint system built from a scene document's handles and constraints by the reader
   * of `marionette pose` (indices in the document's order; errors "name:line: field: ..."). */
  constraintSystemFromDocument(figures: Figure[], doc: object | string,
    options?: { name?: string; spareHandles?: number; spareConstraints?: number }): ConstraintSystem;
  createConstraintSystem(figures: Figure[], options?: { maxHandles?: number; maxConstraints?: number }):
    ConstraintSystem;
  createRig(skin: SkinDoc): Rig;
  createSoftBody(def: SoftBodyDef): SoftBody;
  createSequence(figure: Figure, options?: { fps?: number; rotation?: Interpolation; translation?: Interpolation }):
    Sequence;
  /** Take a into take b (frames of one figure), the feet's phases aligned, planted feet locked.
   * Without bRange, B's frames searched are the window `marionette anim crossfade` chooses
   * without --b-range (bRange 'auto' in the result); with it, those frames ('given'). */
  crossfade(figure: Figure, a: Float64Array, b: Float64Array, fps: number,
    options?: { at?: number; length?: number; bRange?: [number, number]; bFrame?: number; lock?: boolean }):
    { frames: Float64Array; aFrame: number; bFrame: number; length: number; phaseCost: number; locks: number;
      maxViolation: number; bMin: number | null; bMax: number | null; bRange: 'auto' | 'given' | null;
      interestStart: number; interestEnd: number };
  /** The root's ground motion and heading as a track (nframes x 3), and the take in place. */
  rootMotion(figure: Figure, frames: Float64Array): { track: Float64Array; inPlace: Float64Array };
  applyRootMotion(figure: Figure, inPlace: Float64Array, track: Float64Array,
    options?: { fps?: number; turn?: number }): Float64Array;
  loop(figure: Figure, frames: Float64Array, fps: number,
    options?: { minLength?: number; blend?: number; cycles?: number }):
    { frames: Float64Array; start: number; end: number; blend: number; match: number; step: number[] };
  retime(figure: Figure, frames: Float64Array, fps: number, keys: number[][], options?: { ballistic?: boolean }):
    { frames: Float64Array; flights: number; gravity: number; apex: [number, number] };
  /** Euler angles (radians) in order, R = R1(e[0]) R2(e[1]) R3(e[2]), -> quaternion (w, x, y, z). */
  eulerToQuat(order: EulerOrder, e: Vec3): number[];
  /** Euler angles of q; with ref, the solution nearest ref (both branches, whole turns). */
  eulerFromQuat(order: EulerOrder, q: Quat, ref?: Vec3): number[];
  /** q = swing * twist about the unit axis. */
  swingTwist(q: Quat, axis: Vec3): { twist: number; swing: number[]; swingAngle: number };
  /** q projected onto a ball's swing cone and twist range. */
  ballClamp(q: Quat, axis: Vec3, cone: number, lo: number, hi: number): number[];
  createClip(figure: Figure, clip: { span: number; keys: { frame: number; q: ArrayLike<number>; tcb?: [number, number, number] }[] }):
    Clip;
}

export interface IKProblem {
  base?: number | string; tip: number | string; point?: Vec3; target?: Vec3; targetRotation?: Quat;
  weightPosition?: number; weightRotation?: number; pole?: Vec3;
}
export interface IKOptions {
  method?: IKMethod; tolPos?: number; tolRot?: number; maxIters?: number; timeoutMs?: number; seed?: number;
  maxRestarts?: number; respectLimits?: boolean; maxStep?: number; damping?: number; nullspace?: boolean;
  nullspaceGain?: number; timeoutCpu?: boolean;
}
export interface IKResult {
  status: Status; ok: boolean; iterations: number; restarts: number; posErr: number; rotErr: number;
  timeUs: number; message: string;
}

/** A foot's contact track (docs/sequence.md "Contacts"): [first, last] frames, inclusive. */
export interface ContactTrack { joint: string; heel: [number, number][]; toe: [number, number][] }
export class Figure {
  readonly name: string; readonly jointCount: number; readonly nq: number; readonly nv: number;
  readonly joints: JointInfo[]; readonly jointNames: string[];
  readonly motion: Motion | null; skin: SkinDoc | null; readonly disposed: boolean;
  /** The figure document of the figure and its motion (the text `marionette convert` writes). */
  toDocument(): string;
  readonly q: Float64Array; readonly restQ: Float64Array;
  readonly positions: Float64Array; readonly frames: Float64Array;
  setQ(q: ArrayLike<number>): this;
  joint(j: number | string, arg?: string, allowWorld?: boolean): number;
  fk(): this; reset(): this; clampToLimits(): this; setFrame(k: number): this;
  /** Heel and toe contacts of both feet over a take ([] when no rig table knows the legs). */
  footContacts(motion?: { frames: Float64Array; nframes: number; frameTime: number }): ContactTrack[];
  solveIK(problem: IKProblem, options?: IKOptions): IKResult;
  /** The figure re-rooted at a joint, every joint where it is (docs/model.md, "Re-rooting"). */
  reroot(joint: number | string): Figure;
  /** The state of a re-rooting of this figure (or of the figure this one re-roots) that puts
   * every joint where q (default: this figure's state) puts it here. */
  rerootState(other: Figure, q?: ArrayLike<number>): Float64Array;
  solveIKBatch(problem: IKProblem, options: IKOptions | undefined, seedQ: ArrayLike<number>,
    targets: ArrayLike<number>): { count: number; solved: Uint8Array; q: Float64Array };
  dispose(): void;
}

export interface HandleDef {
  type?: 'point' | 'orientation' | 'com'; figure?: number; joint?: number | string; point?: Vec3; name?: string;
}
export interface ConstraintDef {
  type: 'pin' | 'plane' | 'line' | 'orient' | 'equal' | 'balance'; handle: number; handle2?: number;
  target?: Vec3; targetRotation?: Quat; origin?: Vec3; dir?: Vec3; polygon?: Vec3[]; up?: Vec3; margin?: number;
  weight?: number; priority?: number; enabled?: boolean; name?: string;
  /** orient only: hold just this axis of the frame along the target's (Welman 6.3) */
  axis?: 'x' | 'y' | 'z';
}
export interface CSolveOptions {
  method?: CSolver; tol?: number; tolRot?: number; dragTol?: number; maxIters?: number; rcond?: number;
  feedback?: number; feedbackK?: number; dragDamping?: number; maxStep?: number; respectLimits?: boolean;
  minProgress?: number;
}
export interface CSolveResult {
  status: Status; ok: boolean; iterations: number; svdFallbacks: number; rows: number; maxViolation: number;
  maxRotViolation: number; maxDragError: number; unmet: number; message: string;
}
export class ConstraintSystem {
  readonly figures: Figure[]; readonly handleCount: number; readonly constraintCount: number;
  addHandle(def: HandleDef): number;
  addConstraint(def: ConstraintDef): number;
  setTarget(c: number, target: Vec3): this; setTargetRotation(c: number, q: Quat): this;
  setEnabled(c: number, on: boolean): this; setWeight(c: number, w: number): this;
  setJointScale(joint: number | string, scale: number, figure?: number): this;
  jointScale(joint: number | string, figure?: number): number;
  resetJointScales(): this;
  /** Comfort, a secondary goal of drags: the moving joints pulled toward rest and out of a
   * margin inside their limits, in the null space of the constraints; null or false: off. */
  setComfort(options?: { gain?: number; limitMargin?: number; limitGain?: number } | null | false): this;
  /** Comfort's weight of a joint (default 1; 0: no pull toward rest). */
  setComfortWeight(joint: number | string, w: number, figure?: number): this;
  /** The rest state comfort pulls toward (null: the model's). */
  setRest(q: ArrayLike<number> | null, figure?: number): this;
  drag(h: number, target: Vec3, options?: { weight?: number; priority?: number }): this;
  dragRotation(h: number, q: Quat, options?: { weight?: number; priority?: number }): this;
  push(h: number, force: Vec3): this; release(h: number): this; dragError(h: number): number;
  handleValue(h: number): { position: number[]; rotation: number[] };
  invalidate(): this; residual(c: number): number; unmet(c: number): boolean;
  solve(options?: CSolveOptions): CSolveResult;
  dispose(): void;
}

export interface FitOptions {
  maxIters?: number; tol?: number; maxHalvings?: number; coupledRotation?: boolean; vertexError?: boolean;
  coldStart?: boolean;
}
export class Rig {
  readonly vertexCount: number; readonly controllerCount: number; readonly dim: number;
  readonly controllerNames: string[];
  restPose(): Float64Array; deform(pose: ArrayLike<number>): Float64Array;
  createFitter(fixed?: (string | number)[]): Fitter; dispose(): void;
}
export class Fitter {
  readonly rig: Rig;
  fit(pose: Float64Array, targets: ArrayLike<number>, options?: FitOptions):
    { status: Status; ok: boolean; iterations: number; energy: number; rms: number; maxErr: number; message: string };
  /** Forgets what earlier fits taught the fitter: the next fit depends on its arguments only. */
  reset(): void;
  dispose(): void;
}

export interface SequenceConstraintDef extends ConstraintDef {
  start?: number; end?: number; lock?: boolean; targetInterpolation?: 'linear' | 'catmull-rom';
}
export interface TargetKey {
  frame: number; target?: Vec3; targetRotation?: Quat; origin?: Vec3; normal?: Vec3; dir?: Vec3;
}
export interface Key { frame: number; q: Float64Array; tcb: [number, number, number] }
export class Clip {
  readonly span: number; readonly count: number; readonly nq: number; readonly disposed: boolean;
  keys(): Key[];
  dispose(): void;
}
export class SequenceEdit {
  readonly sequence: Sequence; readonly removed: Key[]; readonly added: Key[]; readonly disposed: boolean;
  dispose(): void;
}
export interface SequenceSolveOptions extends CSolveOptions {
  relax?: number; warmStart?: boolean; balance?: boolean; constraints?: boolean;
}
export type LayerMode = 'override' | 'additive';
export interface LayerDef {
  name?: string; mode?: LayerMode; keys: { frame: number; q: ArrayLike<number> }[];
  weights?: [number, number][]; mask?: (string | number)[] | Record<string, number>; warp?: number[][];
}
export class Sequence {
  /** What the document it was read from named (sequenceFromDocument); figure null otherwise. */
  readonly document: { figure: string | null; scale: number | null; contacts: number };
  /** The sequence document (the text the command line writes), naming figure (default: the one read). */
  toDocument(figure?: string, scale?: number | null): string;
  readonly figure: Figure; readonly keyCount: number; readonly fps: number; readonly start: number;
  readonly end: number; readonly disposed: boolean;
  keyFrame(k: number): number; keyQ(k: number): Float64Array;
  setKey(frame: number, q: ArrayLike<number>): number; setKeyTCB(k: number, tcb: [number, number, number]): this;
  removeKey(k: number): this;
  setInterpolation(modes: { rotation?: Interpolation; translation?: Interpolation }, joint?: number | string): this;
  addMotion(frames: ArrayLike<number>, options?: { firstFrame?: number; tol?: number }):
    { keys: number; maxError: number };
  sample(frame: number): Figure;
  sampleQ(frame: number, out?: Float64Array): Float64Array;
  /** Layers (override or additive, weight keys eased between, a joint mask) over the keys. */
  addLayer(def: LayerDef): number;
  readonly layers: { name: string; mode: LayerMode; keyCount: number; weights: [number, number][];
    mask: Float64Array | null; warpKeys: number }[];
  layerWeight(layer: number, frame: number): number;
  /** Time-warp keys [t, s] or [t, s, speed] of the sequence, or of a layer. */
  setTimeWarp(keys: number[][], layer?: number): this;
  warp(t: number, layer?: number): number;
  /** The keys with every layer blended over them. */
  sampleBlendQ(frame: number, out?: Float64Array): Float64Array;
  addHandle(def: Omit<HandleDef, 'figure'>): number;
  addConstraint(def: SequenceConstraintDef): number;
  readonly handleCount: number; readonly constraintCount: number;
  setTargetKey(c: number, key: TargetKey): this;
  targetKeyCount(c: number): number;
  targetKey(c: number, k: number): { frame: number; position: number[]; dir: number[]; rotation: number[] };
  targetAt(c: number, frame: number): { frame: number; position: number[]; dir: number[]; rotation: number[] };
  addBalance(def: { polygon: Vec3[]; up?: Vec3; margin?: number; start?: number; end?: number }): number;
  copy(f0: number, f1: number): Clip;
  cut(f0: number, f1: number): { clip: Clip; edit: SequenceEdit };
  paste(clip: Clip, at: number): SequenceEdit;
  insert(clip: Clip, at: number): SequenceEdit;
  delete(f0: number, f1: number): SequenceEdit;
  stretch(f0: number, f1: number, factor: number): SequenceEdit;
  slide(f0: number, f1: number, delta: number): SequenceEdit;
  undo(edit: SequenceEdit): this;
  redo(edit: SequenceEdit): this;
  solveFrame(frame: number, options?: SequenceSolveOptions): CSolveResult;
  dispose(): void;
}

/** A soft body: a closed surface in a lattice of tetrahedra (dim 3) or a shape's triangles
 * in the plane (dim 2, vertices n x 2). */
export interface SoftBodyDef {
  dim?: 2 | 3; vertices: ArrayLike<number>; triangles: ArrayLike<number>; resolution?: number; density?: number;
  edgeCompliance?: number; elementCompliance?: number; damping?: number; gravity?: Vec3; ground?: number;
  substeps?: number;
}
export interface CoupleOptions {
  driven?: (string | number)[]; over?: 'surface' | 'nodes'; complianceDriven?: number; complianceFree?: number;
  enabled?: boolean; drivenRotation?: boolean; fitIterations?: number;
}
export interface SoftStepResult {
  ok: boolean; status: Status; substeps: number; fitIterations: number; residual: number; fitRms: number;
  maxSpeed: number; us: { sim: number; fit: number; couple: number; surface: number; total: number }; message: string;
}
/** A soft body coupled both ways to a rig (Wu & Umetani 2023). Views are valid until the
 * module's memory grows; the *Copy() forms are arrays of their own. */
export class SoftBody {
  readonly dim: 2 | 3; readonly resolution: number; readonly substeps: number; readonly disposed: boolean;
  readonly vertexCount: number; readonly elementCount: number; readonly corners: 3 | 4; readonly surfaceCount: number;
  readonly controllerCount: number; readonly grabCount: number; readonly coupled: boolean;
  readonly controllerNames: string[]; readonly driven: boolean[];
  positions(): Float64Array; positionsCopy(): Float64Array; velocities(): Float64Array;
  restPositions(): Float64Array; masses(): Float64Array; elements(): Int32Array;
  surface(): Float64Array; surfaceCopy(): Float64Array;
  poses(): Float64Array | null; posesCopy(): Float64Array | null; rigged(): Float64Array | null;
  couple(rig: Rig, options?: CoupleOptions): this;
  setDriven(c: string | number, on: boolean): void;
  drive(c: string | number, pose: ArrayLike<number> | { R: ArrayLike<number>; p: Vec3 }): void;
  grab(i: number, target: Vec3, compliance?: number): void;
  release(i?: number): void;
  nearest(point: Vec3, k?: number): number[];
  step(dt?: number): SoftStepResult;
  residual(): number;
  reset(): void;
  dispose(): void;
}
