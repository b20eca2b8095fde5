// A chart of figures by category (age bins, severities): the series drawn as bars side by side in
// each category (UplotChart loads uPlot and keeps the canvas sized).
import type uPlot from "uplot";
import { useCallback } from "preact/hooks";
import { UplotChart, type ChartMaker } from "../../components/uplot-chart.tsx";
import styles from "./remediation-view.module.css";

export interface ChartSeries {
  /** Names the legend's swatch class too. */
  key: string;
  label: string;
  color: string;
  dash: readonly number[];
  values: readonly (number | null)[];
}

const HEIGHT = 200;
/** The share of a category's width its bars take together. */
const GROUP = 0.8;

/**
 * Side by side: uPlot's data share one x, so each series gets its own x positions within each
 * category (k + its offset) and nothing (null) at the others'.
 */
function alignedData(categories: readonly string[], series: readonly ChartSeries[]): uPlot.AlignedData {
  const step = GROUP / series.length;
  const xs: number[] = [];
  const ys: (number | null)[][] = series.map(() => []);
  categories.forEach((_c, k) =>
    series.forEach((s, i) => {
      xs.push(k - GROUP / 2 + step * (i + 0.5));
      ys.forEach((y, j) => y.push(j === i ? (s.values[k] ?? null) : null));
    }),
  );
  return [xs, ...ys];
}

function options(
  UPlot: typeof uPlot,
  width: number,
  categories: readonly string[],
  series: readonly ChartSeries[],
  xLabel: string | undefined,
) {
  const bars = UPlot.paths.bars!({ size: [0.9, 60] });
  return {
    width,
    height: HEIGHT,
    legend: { show: false },
    cursor: { drag: { x: false, y: false } },
    scales: {
      x: { time: false, range: (): uPlot.Range.MinMax => [-0.5, categories.length - 0.5] },
      y: { range: (_u: uPlot, _min: number, max: number): uPlot.Range.MinMax => [0, Math.max(1, max * 1.1)] },
    },
    axes: [
      {
        stroke: "#344054",
        grid: { show: false },
        splits: () => categories.map((_c, i) => i),
        values: () => [...categories],
        ...(xLabel && { label: xLabel, labelSize: 20 }),
      },
      { stroke: "#344054", grid: { stroke: "#eaecf0" } },
    ],
    series: [
      {},
      ...series.map((s) => ({
        label: s.label,
        stroke: s.color,
        fill: s.color,
        width: 1,
        dash: [...s.dash],
        points: { show: false },
        paths: bars,
      })),
    ],
  } satisfies uPlot.Options;
}

export function RemediationChart({
  categories,
  series,
  xLabel,
}: {
  /** Short: they sit side by side under the chart, 375 px wide at worst. */
  categories: readonly string[];
  series: readonly ChartSeries[];
  xLabel?: string;
}) {
  const make = useCallback<ChartMaker>(
    (UPlot, width) => ({
      options: options(UPlot, width, categories, series, xLabel),
      data: alignedData(categories, series),
    }),
    [categories, series, xLabel],
  );
  return <UplotChart make={make} height={HEIGHT} class={styles.chart} />;
}
