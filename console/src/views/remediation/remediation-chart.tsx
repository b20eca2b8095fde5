// A chart of figures by category (age bins, severities) drawn by uPlot, loaded as the trend chart
// is: a separate chunk fetched when a chart first shows, writing element.style only, so the page's
// CSP holds. The series are drawn as bars side by side in each category. The canvas is an
// image to assistive technology: its numbers are in the table that goes with it.
import "uplot/dist/uPlot.min.css";
import type uPlot from "uplot";
import { useEffect, useRef, useState } from "preact/hooks";
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
  const box = useRef<HTMLDivElement>(null);
  const [unavailable, setUnavailable] = useState(false);
  useEffect(() => {
    let chart: uPlot | undefined;
    let observer: ResizeObserver | undefined;
    let gone = false;
    void import("uplot").then(
      ({ default: UPlot }) => {
        if (gone || !box.current) return;
        const data = alignedData(categories, series);
        chart = new UPlot(options(UPlot, box.current.clientWidth, categories, series, xLabel), data, box.current);
        observer = new ResizeObserver(() => {
          if (box.current && chart && box.current.clientWidth !== chart.width)
            chart.setSize({ width: box.current.clientWidth, height: HEIGHT });
        });
        observer.observe(box.current);
      },
      () => setUnavailable(true),
    );
    return () => {
      gone = true;
      observer?.disconnect();
      chart?.destroy();
    };
  }, [categories, series, xLabel]);
  if (unavailable)
    return <p>The chart could not be loaded: its numbers are in the table below (reload the page to try again).</p>;
  return <div ref={box} class={styles.chart} />;
}
