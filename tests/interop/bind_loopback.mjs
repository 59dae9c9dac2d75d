// Preload (`node --import`) for servers that listen on every interface (server-everything's
// `app.listen(PORT)`): a listen() without a host binds 127.0.0.1 instead.
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'object' && args[0] !== null && !Array.isArray(args[0])) {
    if (args[0].port !== undefined && args[0].path === undefined && args[0].host === undefined) {
      args[0] = { ...args[0], host: '127.0.0.1' };
    }
  } else if (typeof args[0] === 'number' || (typeof args[0] === 'string' && /^\d+$/.test(args[0]))) {
    if (typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
  }
  return listen.apply(this, args);
};
