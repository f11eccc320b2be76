// The tab's daemon session. One WebSocket carries the daemon's JSON-RPC lines both
// ways (docs/protocol.md); answers are matched by id, notifications go to listeners.
'use strict';

/** A daemon error (docs/protocol.md, Errors): `kind` is data.kind. */
class RPCError extends Error {
  constructor(error) {
    super(error && error.message || 'error');
    this.code = error && error.code;
    this.data = (error && error.data) || {};
    this.kind = this.data.kind || 'unknown';
  }
}

/** One session with the daemon: this tab's WebSocket to the bridge. */
class DaemonSession {
  constructor(url) {
    this.url = url;
    this.nextId = 1;
    this.pending = new Map();
    this.listeners = new Map();
    this.onclose = null;
    this.sent = [];   // every request sent, oldest first: [{id, method, params}] (read by the tests)
  }

  open() {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(this.url);
      this.ws = ws;
      ws.onopen = () => resolve(this);
      ws.onerror = () => reject(new Error('cannot reach the gallery bridge'));
      ws.onmessage = (event) => this.receive(event.data);
      ws.onclose = () => {
        const closed = new RPCError({ code: -1, message: 'the connection to the gallery closed', data: { kind: 'closed' } });
        for (const waiter of this.pending.values()) waiter.reject(closed);
        this.pending.clear();
        if (this.onclose) this.onclose();
      };
    });
  }

  /** Sends a request; returns {id, answer} where answer is a promise of the result. */
  request(method, params) {
    const id = this.nextId++;
    const answer = new Promise((resolve, reject) => {
      if (!this.ws || this.ws.readyState !== WebSocket.OPEN) {
        reject(new RPCError({ code: -1, message: 'not connected to the daemon', data: { kind: 'closed' } }));
        return;
      }
      this.pending.set(id, { resolve, reject });
      this.sent.push({ id, method, params });
      if (this.sent.length > 5000) this.sent.splice(0, 1000);
      this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params: params || {} }));
    });
    return { id, answer };
  }

  /** Sends a request and waits for its result. */
  call(method, params) { return this.request(method, params).answer; }

  /** Calls `handler(params)` for every notification named `method`. */
  on(method, handler) {
    if (!this.listeners.has(method)) this.listeners.set(method, []);
    this.listeners.get(method).push(handler);
  }

  receive(text) {
    let message;
    try { message = JSON.parse(text); } catch (e) { console.warn('not JSON from the bridge', text); return; }
    if (message.id !== undefined && message.id !== null && (message.result !== undefined || message.error !== undefined)) {
      const waiter = this.pending.get(message.id);
      if (!waiter) return;
      this.pending.delete(message.id);
      if (message.error) waiter.reject(new RPCError(message.error)); else waiter.resolve(message.result);
    } else if (message.method) {
      for (const handler of this.listeners.get(message.method) || []) {
        try { handler(message.params || {}); } catch (e) { console.error(e); }
      }
    } else if (message.error) {
      console.warn('daemon error without id', message.error);
    }
  }
}
