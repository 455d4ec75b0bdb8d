import fs from 'node:fs';
import path from 'node:path';

/**
 * Latency-versus-offered-load charts of the benchmarks, as SVG files in `bench-results/`
 * (git-ignored), drawn by Apache ECharts' server-side SVG renderer (the `echarts` package,
 * pure JavaScript, no DOM or canvas). `BENCH_CHARTS_DIR` writes them elsewhere too (the
 * docs/operations.md shows the copies under docs/benchmarks/: `BENCH_CHARTS_DIR=docs/benchmarks`).
 */
export const RESULTS_DIR = path.resolve(__dirname, '..', '..', 'bench-results');

export interface LatencyChart {
  /** File name: `<name>-latency.svg`. */
  name: string;
  title: string;
  /** The offered load's unit, e.g. `events/s`. */
  unit: string;
  /** One line per system; y is the p95 in ms, null where nothing arrived. */
  series: { name: string; points: { x: number; y: number | null }[] }[];
}

/** The subset of ECharts' API used here. */
interface ECharts {
  init(
    dom: null,
    theme: null,
    options: { renderer: 'svg'; ssr: true; width: number; height: number },
  ): {
    setOption(option: unknown): void;
    renderToSVGString(): string;
    dispose(): void;
  };
}

/** Writes the chart; answers the line the bench prints about it. */
export async function writeLatencyChart(chart: LatencyChart): Promise<string> {
  let echarts: ECharts;
  try {
    // A name in a variable: the typecheck does not need the package to be installed.
    const packageName = 'echarts';
    echarts = (await import(packageName)) as ECharts;
  } catch {
    return `chart ${chart.name}-latency.svg not written: the npm package echarts is not installed`;
  }
  const instance = echarts.init(null, null, { renderer: 'svg', ssr: true, width: 800, height: 450 });
  instance.setOption({
    animation: false,
    backgroundColor: '#ffffff',
    title: { text: chart.title, left: 'center', textStyle: { fontSize: 14 } },
    legend: { bottom: 0 },
    grid: { left: 70, right: 30, top: 50, bottom: 70 },
    xAxis: { type: 'value', name: `offered load (${chart.unit})`, nameLocation: 'middle', nameGap: 28 },
    yAxis: { type: 'log', name: 'p95 (ms, log scale)', nameLocation: 'middle', nameGap: 50, min: 1 },
    series: chart.series.map((line) => ({
      name: line.name,
      type: 'line',
      symbolSize: 7,
      data: line.points.filter((point) => point.y !== null).map((point) => [point.x, Math.max(1, point.y as number)]),
    })),
  });
  const svg = instance.renderToSVGString();
  instance.dispose();
  const written: string[] = [];
  for (const dir of [RESULTS_DIR, ...(process.env.BENCH_CHARTS_DIR ? [path.resolve(process.env.BENCH_CHARTS_DIR)] : [])]) {
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${chart.name}-latency.svg`);
    fs.writeFileSync(file, svg);
    written.push(path.relative(process.cwd(), file));
  }
  return `chart: ${written.join(', ')}`;
}
