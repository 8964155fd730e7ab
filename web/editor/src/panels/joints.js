// The joint list: sites (compound joints as one entry), indented by depth; a click selects.
// A document of several figures lists each figure's joints under its name (`figure/joint`).
import { $ } from './dom.js';
import { figureOfJoint } from '../figures.js';

/** Fills #joint-list; returns it. */
export function jointList(store, vp) {
  const fig = store.figure;
  const list = $('joint-list');
  const depth = (s) => {
    let d = 0;
    for (let p = vp.sites[s].parent; p >= 0; p = vp.sites[p].parent) d++;
    return d;
  };
  const order = [];
  const visit = (s) => {
    order.push(s);
    for (const c of vp.sites[s].children) visit(c);
  };
  vp.sites.forEach((s, i) => {
    if (s.parent < 0) visit(i);
  });
  let group = '';
  for (const s of order) {
    const site = vp.sites[s];
    const name = fig.jointNames[site.joint],
      figName = store.multi ? figureOfJoint(name) : '';
    if (figName !== group) {
      group = figName;
      const head = document.createElement('li');
      head.className = 'figure-group';
      head.textContent = figName;
      head.dataset.figure = figName;
      list.append(head);
    }
    const li = document.createElement('li');
    li.textContent = (figName ? name.slice(figName.length + 1) : name).replace(/\.\d+$/, '');
    li.style.paddingLeft = `${6 + 10 * depth(s)}px`;
    li.dataset.joint = fig.jointNames[site.joint];
    li.addEventListener('click', () => store.select(site.joint));
    list.append(li);
  }
  return list;
}
