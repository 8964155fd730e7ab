// The animation panels' styles, added to the page once (the page's own stylesheet stays the
// posing UI's).
const CSS = `
#timeline { display: flex; flex-direction: column; gap: 2px; background: #151922; color: #d1d5db;
  border-top: 1px solid #2b3140; font: 12px system-ui, sans-serif; user-select: none;
  --tl-fg: #c8ccd4; --tl-dim: #4b5563; --tl-accent: #f59e0b; --tl-ruler: #1c212c; --tl-grid: #262c3a;
  --tl-range: rgba(59,130,246,0.25); --tl-key: #e5e7eb; --tl-playhead: #ef4444; --tl-con: #10b981; }
#timeline .tl-bar { display: flex; flex-wrap: wrap; gap: 4px 12px; align-items: center; padding: 4px 8px 0; }
#timeline .tl-group { display: flex; gap: 3px; align-items: center; }
#timeline .tl-label { color: #9ca3af; margin-right: 3px; }
#timeline .tl-range { color: #93c5fd; min-width: 78px; font-variant-numeric: tabular-nums; }
#timeline .tl-x { color: #9ca3af; }
#timeline input[type=number] { width: 48px; background: #0f131a; color: #e5e7eb; border: 1px solid #374151; border-radius: 3px; padding: 1px 3px; }
#timeline button, .anim-transport button, .anim-menus button, #graph-panel select {
  background: #252b37; color: #e5e7eb; border: 1px solid #374151; border-radius: 3px; padding: 2px 7px; cursor: pointer; font: inherit; }
#timeline button:hover, .anim-transport button:hover, .anim-menus button:hover { background: #323a4a; }
#timeline .tl-check { display: flex; gap: 3px; align-items: center; margin-left: 4px; }
#timeline .tl-canvas { width: 100%; height: 74px; display: block; cursor: crosshair; touch-action: none; }
.anim-transport { display: flex; gap: 2px; align-items: center; font: 12px system-ui, sans-serif; }
.anim-transport .vcr { min-width: 26px; height: 24px; padding: 2px 5px; display: inline-flex; align-items: center; justify-content: center; }
.anim-transport .vcr.on { background: #2563eb; border-color: #3b82f6; }
.anim-transport .vcr.toggle:not(.on) { color: #6b7280; }
.anim-transport .vcr-frame { display: flex; gap: 3px; align-items: center; margin-left: 6px; }
.anim-transport .vcr-frame input { width: 50px; background: #0f131a; color: #e5e7eb; border: 1px solid #374151; border-radius: 3px; }
.anim-transport .vcr-extent { color: #9ca3af; margin: 0 6px; font-variant-numeric: tabular-nums; }
.anim-transport .vcr-keep { display: flex; gap: 3px; align-items: center; white-space: nowrap; margin-left: 4px; }
.anim-menus { display: flex; gap: 4px; position: relative; align-items: center; margin-left: auto; }
.anim-menus .vcr-extent { color: #9ca3af; margin-right: 6px; font-variant-numeric: tabular-nums; white-space: nowrap; }
.anim-menu-wrap { position: relative; }
.anim-menu { position: absolute; bottom: 100%; right: 0; z-index: 50; margin-bottom: 4px; min-width: 240px; max-height: 70vh;
  overflow: auto; background: #1b202b; border: 1px solid #374151; border-radius: 5px; padding: 6px;
  box-shadow: 0 8px 24px rgba(0,0,0,.45); display: flex; flex-direction: column; gap: 4px; color: #e5e7eb; font: 12px system-ui, sans-serif; }
.anim-menu[hidden] { display: none; }
.anim-menu > button { text-align: left; }
.flip-list { display: flex; flex-direction: column; gap: 4px; }
.flip-item { display: grid !important; grid-template-columns: 56px 1fr; grid-template-rows: auto auto; column-gap: 8px;
  align-items: center; text-align: left; padding: 4px !important; }
.flip-item.current { border-color: #3b82f6 !important; }
.flip-icon { width: 56px; height: 56px; grid-row: 1 / 3; background: #0f131a; border-radius: 4px; }
.flip-name { font-weight: 600; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; max-width: 200px; }
.flip-meta, .anim-dim { color: #9ca3af; }
.flip-empty, .anim-pad { padding: 4px; }
.anim-head { font-weight: 600; color: #9ca3af; text-transform: uppercase; font-size: 10px; letter-spacing: .06em; margin-top: 4px; }
.anim-lock { border-top: 1px solid #2b3140; padding: 4px 0; display: flex; flex-direction: column; gap: 3px; }
.anim-row { display: flex; gap: 4px; align-items: center; }
.anim-num { width: 54px; background: #0f131a; color: #e5e7eb; border: 1px solid #374151; border-radius: 3px; }
#graph { display: flex; flex-direction: column; gap: 4px; padding: 4px 8px; background: #151922; color: #d1d5db; font: 12px system-ui, sans-serif; }
#graph .graph-bar { display: flex; gap: 12px; align-items: center; }
#graph .graph-info { color: #9ca3af; }
#graph .graph-canvas { width: 100%; height: 150px; display: block; cursor: crosshair; touch-action: none; }
.anim-title { font-weight: 600; color: #f3f4f6; }
.anim-dialog { position: fixed; left: 50%; top: 30%; transform: translateX(-50%); z-index: 60; background: #1c2330;
  border: 1px solid #374151; border-radius: 6px; padding: 12px 14px; box-shadow: 0 8px 24px #0008; display: flex;
  flex-direction: column; gap: 10px; color: #e5e7eb; font: 13px system-ui, sans-serif; }
.anim-dialog .anim-row { display: flex; gap: 6px; align-items: center; }
.anim-dialog input { width: 70px; }
body.anim-drop::after { content: 'Drop a figure file (.bvh, .skel, .urdf, .gltf, .glb) to open it as a new sequence';
  position: fixed; inset: 12px; border: 3px dashed #3b82f6; border-radius: 12px; background: rgba(15,19,26,.75);
  color: #e5e7eb; font: 600 18px system-ui, sans-serif; display: flex; align-items: center; justify-content: center; z-index: 100; pointer-events: none; }
`;

export function installStyle() {
  if (document.getElementById('anim-style')) return;
  const el = document.createElement('style');
  el.id = 'anim-style';
  el.textContent = CSS;
  document.head.append(el);
}
