import { Bench, type Task } from "tinybench";
import { median } from "./stats.js";

/** One function to time; `beforeEach` runs outside the timing. */
export interface TimedTask {
  readonly name: string;
  readonly fn: () => void;
  readonly beforeEach?: () => void;
  /** Milliseconds the task runs in each round (tinybench `time`). */
  readonly time: number;
  /** Fewest runs of the task in each round (tinybench `iterations`). */
  readonly iterations: number;
}

function medianMs(task: Task): number {
  const result = task.result;
  if (!("latency" in result)) throw new Error(`task ${task.name} did not complete (${result.state})`);
  return result.latency.p50;
}

/**
 * Times tasks with tinybench in rounds: each round runs every task once after the other, so a load on the
 * machine that comes and goes (other processes) falls on all tasks alike, and a ratio can be taken round by
 * round. Returns each task's median latency in milliseconds, one per round.
 */
export async function timeInRounds(tasks: readonly TimedTask[], rounds: number): Promise<Map<string, number[]>> {
  const byTask = new Map<string, number[]>(tasks.map((task) => [task.name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const task of tasks) {
      const bench = new Bench({
        time: task.time,
        iterations: task.iterations,
        warmupTime: Math.min(200, task.time),
        warmupIterations: 1,
      });
      bench.add(task.name, task.fn, task.beforeEach ? { beforeEach: task.beforeEach } : {});
      await bench.run();
      for (const done of bench.tasks) byTask.get(done.name)?.push(medianMs(done));
    }
  }
  return byTask;
}

/** The median over rounds of one task's latency. */
export function medianOf(times: Map<string, number[]>, name: string): number {
  return median(times.get(name) ?? []);
}

/** The ratio `numerator / denominator` of each round. */
export function ratiosOf(times: Map<string, number[]>, numerator: string, denominator: string): number[] {
  const top = times.get(numerator) ?? [];
  const bottom = times.get(denominator) ?? [];
  return top.map((value, round) => value / (bottom[round] as number));
}
