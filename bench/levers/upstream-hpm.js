// Upstream lever, "before": express 5 + http-proxy-middleware v3, the body reshaped by its
// responseInterceptor (selfHandleResponse), a keep-alive agent to the data service.
'use strict';
const http = require('node:http');
const express = require('express');
const { createProxyMiddleware, responseInterceptor } = require('http-proxy-middleware');
const { listen, reshape, UPSTREAM_CONNECTIONS } = require('./common');

const agent = new http.Agent({ keepAlive: true, maxSockets: UPSTREAM_CONNECTIONS });
const app = express();
app.disable('x-powered-by');
// A route, not app.use: app.use('/path', …) would strip the path from req.url before the proxy
// sees it, and the undici-in-express variant is a route too, so both pay the same routing.
app.get(
  '/internal/v1/listings',
  createProxyMiddleware({
    target: process.env.TARGET_URL,
    agent,
    selfHandleResponse: true,
    on: { proxyRes: responseInterceptor(async (buffer) => reshape(buffer.toString('utf8'))) },
  }),
);
listen(http.createServer(app));
