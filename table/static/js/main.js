// The web table's entry point: the page's URL fragment says what to show.
//   #game=ID&seat=N&token=T  play seat N (the token never leaves the browser but to the API,
//                            in an Authorization header: fragments are not sent to servers)
//   #game=ID                 watch as a spectator
//   #game=ID&join=N          take the open seat N
//   #replay=ID               replay a finished game
//   (nothing)                start a game

import { showLobby, showJoin } from './lobby.js';
import { showReplay } from './replay.js';
import { showTable } from './table.js';

const main = document.getElementById('main');
let current = null;

export function fragment(hash = location.hash) {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  return Object.fromEntries(params.entries());
}

function route() {
  current?.stop();
  const f = fragment();
  main.replaceChildren();
  if (f.replay) current = showReplay(main, f.replay);
  else if (f.game && f.join !== undefined && !f.token) current = showJoin(main, f.game, Number(f.join));
  else if (f.game) current = showTable(main, { gameId: f.game, token: f.token });
  else current = showLobby(main);
  main.focus({ preventScroll: true });
}

window.addEventListener('hashchange', route);
route();
