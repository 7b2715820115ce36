/** The Runs view's row menus of package.json, evaluated for a row's `contextValue` as VS Code does. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

interface MenuItem {
  command: string;
  when?: string;
  group?: string;
}

const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as {
  contributes: { menus: Record<string, MenuItem[]> };
};

/** The `viewItem` term of a Runs view `when` clause (== or =~). */
function showsFor(when: string, contextValue: string): boolean {
  if (!when.includes('view == skillopt.runs')) return false;
  const eq = /viewItem == (\S+)/.exec(when);
  if (eq) return eq[1] === contextValue;
  const re = /viewItem =~ \/(.+?)\/(?:\s|$)/.exec(when);
  return re ? new RegExp(re[1]!).test(contextValue) : false;
}

/**
 * The commands a row offers (trust granted): its context menu, or its inline actions (the icons on
 * the row, which VS Code shows only there, not in the context menu).
 */
export function menuOf(contextValue: string, only?: 'inline'): string[] {
  return pkg.contributes.menus['view/item/context']!.filter(
    (m) =>
      m.when !== undefined &&
      showsFor(m.when, contextValue) &&
      (m.group?.startsWith('inline') === true) === (only === 'inline'),
  )
    .map((m) => m.command)
    .filter((c, i, all) => all.indexOf(c) === i)
    .sort();
}
