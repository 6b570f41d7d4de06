// format.js -- numbers as the axes and the legend show them.
//
// fmtValue is the default: up to 7 significant digits, exponent notation
// for the very large and the very small. An axis may carry a format of
// OpenTSDB's UI (yformat=, y2format=), which handed it to gnuplot; the part
// of gnuplot's syntax read here is literal text with conversions
//   %[.prec]f  %[.prec]e  %[.prec]g  %d  (as printf)
//   %[.prec]s  the mantissa for an SI prefix (1500 -> 1.5), %c that prefix (k)
//   %%         a percent sign
// e.g. "%.1s %cB" reads 1500000 as "1.5 MB". Anything else after a '%' is
// an error, reported once by checkFormat so the page can show it.

export function fmtValue(v) {
  if (v == null || Number.isNaN(v)) return '–';
  return Math.abs(v) >= 1e6 || (v !== 0 && Math.abs(v) < 1e-3) ? v.toExponential(4) : String(+v.toPrecision(7));
}

const SI = { '-24': 'y', '-21': 'z', '-18': 'a', '-15': 'f', '-12': 'p', '-9': 'n', '-6': 'µ', '-3': 'm',
  0: '', 3: 'k', 6: 'M', 9: 'G', 12: 'T', 15: 'P', 18: 'E', 21: 'Z', 24: 'Y' };
const CONV = /%(?:(\.\d+)?([fegsdc])|%)/g;

// The SI exponent of v: a multiple of 3 within SI's names.
function siExp(v) {
  if (v === 0 || !Number.isFinite(v)) return 0;
  return Math.max(-24, Math.min(24, 3 * Math.floor(Math.log10(Math.abs(v)) / 3)));
}

// null if fmt is usable, else why not.
export function checkFormat(fmt) {
  const rest = fmt.replace(CONV, '');
  return rest.includes('%') ? `format '${fmt}': only %f %e %g %d %s %c and %% (with an optional .precision) are understood` : null;
}

export function fmtWith(fmt, v) {
  if (!fmt || checkFormat(fmt)) return fmtValue(v);
  if (v == null || Number.isNaN(v)) return '–';
  const x = siExp(v);
  return fmt.replace(CONV, (all, prec, conv) => {
    if (!conv) return '%';
    const p = prec ? +prec.slice(1) : 6;
    switch (conv) {
      case 'f': return v.toFixed(p);
      case 'e': return v.toExponential(p);
      case 'g': return String(+v.toPrecision(Math.max(1, p)));
      case 'd': return String(Math.round(v));
      case 's': return (v / 10 ** x).toFixed(prec ? p : 1).replace(prec ? /$^/ : /\.0$/, '');
      default: return SI[x]; // 'c'
    }
  });
}
