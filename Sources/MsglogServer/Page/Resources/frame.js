// The one requestAnimationFrame scheduler: a task asked for several times
// before the next frame runs once in it, in the order first asked.

const queued = new Set();

export function nextFrame(task) {
  if (queued.size === 0) requestAnimationFrame(run);
  queued.add(task);
}

function run() {
  const tasks = [...queued];
  queued.clear();
  for (const task of tasks) task();
}
