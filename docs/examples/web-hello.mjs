import { load } from 'marionette-wasm';
const mn = await load(), fig = mn.stickman().fk();
console.log(fig.jointNames[0], ...fig.positions.subarray(0, 3));
