// semver (a dependency of aws-cdk-lib, hoisted to node_modules) ships no types; these are the calls the tests make.
declare module 'semver' {
  const semver: {
    validRange(range: string): string | null;
    satisfies(version: string, range: string): boolean;
    subset(sub: string, dom: string): boolean;
  };
  export default semver;
}
