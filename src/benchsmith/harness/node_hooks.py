"""Small JavaScript modules a rendered Node test command preloads to report each test to
``$BENCHSMITH_REPORT`` as JSON lines, where the runner itself offers no usable reporter: mocha
started by a project's own task (grunt, gulp, a node script), and uvu's test files."""

from __future__ import annotations

# Preloaded (NODE_OPTIONS=--require) into every node process of a script: the first process that
# loads mocha reports its runs; mocha processes started by those tests are left alone.
MOCHA_HOOK = r"""'use strict';
const Module = require('module');
const fs = require('fs');
const out = process.env.BENCHSMITH_REPORT;
function titles(runnable) {
  if (typeof runnable.titlePath === 'function') return runnable.titlePath();
  const found = [];
  for (let node = runnable; node; node = node.parent) if (node.title) found.unshift(node.title);
  return found;
}
function listen(runner) {
  const note = (status) => (test) => fs.appendFileSync(out, JSON.stringify({
    benchsmith: 'mocha', status, file: test.file || '', titlePath: titles(test) }) + '\n');
  runner.on('pass', note('passed'));
  runner.on('fail', note('failed'));
  runner.on('pending', note('skipped'));
}
if (out && !process.env.BENCHSMITH_MOCHA_SEEN) {
  const load = Module._load;
  Module._load = function (request) {
    const loaded = load.apply(this, arguments);
    if (loaded && typeof loaded === 'function' && loaded.Runner && loaded.reporters &&
        !process.env.BENCHSMITH_MOCHA_SEEN) {
      process.env.BENCHSMITH_MOCHA_SEEN = '1';
      const run = loaded.Runner.prototype.run;
      loaded.Runner.prototype.run = function () {
        if (!this.benchsmithListened) { this.benchsmithListened = true; listen(this); }
        return run.apply(this, arguments);
      };
    }
    return loaded;
  };
}
"""

# Preloaded (--require) into node running one uvu test file: `require('uvu')` gets test and
# suite functions that report each test; the ESM loader below routes `import 'uvu'` here too.
UVU_HOOK = r"""'use strict';
const Module = require('module');
const fs = require('fs');
const out = process.env.BENCHSMITH_REPORT;
function note(file, suite, name, status) {
  fs.appendFileSync(out, JSON.stringify({ benchsmith: 'uvu', file, suite, name, status }) + '\n');
}
function wrapTest(test, suite, file) {
  const watched = (method) => (name, handler) => method(name, async function () {
    try { await handler.apply(this, arguments); } catch (error) {
      note(file, suite, name, 'failed'); throw error;
    }
    note(file, suite, name, 'passed');
  });
  const wrapped = watched(test);
  for (const key of Object.keys(test)) wrapped[key] = test[key];
  wrapped.only = watched(test.only);
  wrapped.skip = (name) => { note(file, suite, name, 'skipped'); return test.skip(name); };
  return wrapped;
}
globalThis.benchsmithUvu = function (real, file) {
  return { test: wrapTest(real.test, '', file), exec: real.exec,
           suite: (name, state) => wrapTest(real.suite(name, state), name, file) };
};
const load = Module._load;
Module._load = function (request, parent) {
  const loaded = load.apply(this, arguments);
  if (request === 'uvu' && parent && parent.filename) {
    return globalThis.benchsmithUvu(loaded, parent.filename);
  }
  return loaded;
};
"""

# An ESM loader (node --experimental-loader): `import ... from 'uvu'` in a test file resolves
# to UVU_MODULE, told the real module's URL and the importing file.
UVU_LOADER = r"""export async function resolve(specifier, context, next) {
  const found = await next(specifier, context);
  if (specifier !== 'uvu' || !context.parentURL || context.parentURL.includes('benchsmith-uvu')) {
    return found;
  }
  const wrapper = new URL(import.meta.url.replace(/loader\.mjs$/, 'module.mjs'));
  wrapper.searchParams.set('real', found.url);
  wrapper.searchParams.set('file', context.parentURL);
  return { url: wrapper.href, format: 'module', shortCircuit: true };
}
"""

UVU_MODULE = r"""const params = new URL(import.meta.url).searchParams;
const real = await import(params.get('real'));
const wrapped = globalThis.benchsmithUvu(real, params.get('file'));
export const test = wrapped.test;
export const suite = wrapped.suite;
export const exec = wrapped.exec;
"""
