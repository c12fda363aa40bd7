// Preloaded into the profiled gateway (NODE_OPTIONS=--require ...; --cpu-prof itself is not allowed
// in NODE_OPTIONS): samples the process with V8's profiler, like --cpu-prof (1 ms interval), and
// writes the profile to CPU_PROFILE_FILE when SIGTERM arrives, before the gateway's own shutdown.
'use strict';
const inspector = require('node:inspector');
const { writeFileSync } = require('node:fs');

const session = new inspector.Session();
session.connect();
session.post('Profiler.enable');
session.post('Profiler.setSamplingInterval', { interval: 1000 });
session.post('Profiler.start');
process.once('SIGTERM', () => {
  session.post('Profiler.stop', (err, result) => {
    if (!err) writeFileSync(process.env.CPU_PROFILE_FILE, JSON.stringify(result.profile));
    session.disconnect();
  });
});
