// JSONata helper functions the translated expressions call. Step Functions' JSONata has no user
// function library, so each helper is bound at the start of the expression block that uses it
// (`( $sfStep := function…; <expr> )`). They pin down semantics where plain JSONata differs from the
// TypeScript evaluator: path steps over arrays (JSONata maps instead of returning missing), JSON
// strings (traversed after `$parse`, a Step Functions built-in), truthiness of [] / {}, deep equality,
// ordering of mixed types (JSONata throws), and the blank string form of null.
// Brackets inside the regex literals are escaped because JSONata's regex scanner counts them.

/** Helper name → JSONata function source. */
export const JSONATA_HELPERS: Readonly<Record<string, string>> = {
  // Written without optional whitespace: every expression that uses a helper carries its source,
  // so each byte here is repeated across the definition (kept readable by one operator per step).
  $sfJson:
    'function($v){$type($v)="string" and (($contains($v,/^[ \\t\\n\\r]*\\{/) and $contains($v,/\\}[ \\t\\n\\r]*$/)) or ($contains($v,/^[ \\t\\n\\r]*\\[/) and $contains($v,/\\][ \\t\\n\\r]*$/)))?$parse($v):$v}',
  $sfStep:
    'function($v,$k){($c:=$sfJson($v);$type($k)="number"?($type($c)="array" and $k<$count($c)?$c[$k]):($type($c)="object"?$lookup($c,$k)))}',
  $sfTruthy:
    'function($v){($t:=$type($v);$t="string"?$v!="":$t="number"?$v!=0:$t="boolean"?$v:$t="array"?$count($v)>0:$t="object"?$count($keys($v))>0:false)}',
  // `$string` returns a string unchanged, and `!=` is false when a side is undefined, so a missing value also gives "".
  $sfStr: 'function($v){$type($v)!="null"?$string($v):""}',
  $sfQuote: 'function($s){($j:=$string([$s]);$substring($j,1,$length($j)-2))}',
  $sfCanon:
    'function($v){($t:=$type($v);$t="array"?"["&$join($map($v,function($e){$sfCanon($e)}),",")&"]":$t="object"?"{"&$join($map($sort($keys($v)),function($k){$sfQuote($k)&":"&$sfCanon($lookup($v,$k))}),",")&"}":$t="string"?$sfQuote($v):$exists($v) and $t!="null"?$string($v):"null")}',
  $sfEq:
    'function($a,$b){($ta:=$exists($a)?$type($a):"null";$tb:=$exists($b)?$type($b):"null";$ta!=$tb?false:$ta="null"?true:($ta="array" or $ta="object")?$sfCanon($a)=$sfCanon($b):$a=$b)}',
  $sfOrd: 'function($a,$b){($type($a)="number" and $type($b)="number") or ($type($a)="string" and $type($b)="string")}',
};

/** Which helpers each helper calls (so binding one binds its dependencies first). */
const DEPENDS: Readonly<Record<string, readonly string[]>> = {
  $sfStep: ['$sfJson'],
  $sfCanon: ['$sfQuote'],
  $sfEq: ['$sfCanon'],
};

/** Each helper with the text of a call to it (`$sfStep(`), in declaration order. */
const HELPER_CALLS: readonly (readonly [string, string])[] = Object.keys(JSONATA_HELPERS).map((name) => [name, `${name}(`]);
/** What every helper name starts with. */
const HELPER_PREFIX = '$sf';

/** The helpers `jsonata` (an expression) calls, with their dependencies, in a valid binding order. */
export function jsonataHelpersUsed(jsonata: string): string[] {
  const out: string[] = [];
  // Many translated expressions call no helper; one scan says so (this runs for every expression).
  if (!jsonata.includes(HELPER_PREFIX)) return out;
  const visit = (name: string): void => {
    if (out.includes(name)) return;
    for (const d of DEPENDS[name] ?? []) visit(d);
    out.push(name);
  };
  for (const [name, call] of HELPER_CALLS) {
    if (jsonata.includes(call)) visit(name);
  }
  return out;
}

/** The `$name := function…;` bindings for the given helpers, in order. */
export function jsonataHelperBindings(names: readonly string[]): string {
  return names.map((n) => `${n} := ${JSONATA_HELPERS[n]!};`).join(' ');
}

/** Wraps an expression in a block that first binds every helper it (transitively) uses. */
export function withJsonataHelpers(jsonata: string): string {
  const used = jsonataHelpersUsed(jsonata);
  if (used.length === 0) return jsonata;
  return `( ${jsonataHelperBindings(used)} ${jsonata} )`;
}
