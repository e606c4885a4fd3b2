# The few nixpkgs `lib` functions the flake and the other stubs call. `fileset` keeps a plain
# list of paths; like the real one, it fails on a path that does not exist, which in a flake
# inside git means: a file the build needs is not tracked.
let
  toList = x: if builtins.isList x then x else [ x ];
  lib = {
    genAttrs =
      names: f:
      builtins.listToAttrs (
        map (n: {
          name = n;
          value = f n;
        }) names
      );
    hasPrefix = pre: s: builtins.substring 0 (builtins.stringLength pre) s == pre;
    any = builtins.any;
    optionals = cond: xs: if cond then xs else [ ];
    fix =
      f:
      let
        x = f x;
      in
      x;
    extends =
      overlay: f: final:
      let
        prev = f final;
      in
      prev // overlay final prev;

    fileset = {
      unions = sets: builtins.concatLists (map toList sets);
      maybeMissing = p: if builtins.pathExists p then [ p ] else [ ];
      toSource =
        { root, fileset }:
        let
          files = map (
            p:
            if builtins.pathExists p then
              toString p
            else
              throw "lib.fileset.toSource: ${toString p} does not exist (is it tracked by git?)"
          ) (toList fileset);
          keep =
            path: type:
            lib.any (
              f: f == path || lib.hasPrefix (f + "/") path || (type == "directory" && lib.hasPrefix (path + "/") f)
            ) files;
        in
        # Force every member, so a missing one fails even when another member covers it.
        builtins.deepSeq files builtins.path {
          path = root;
          name = "source";
          filter = keep;
        };
    };
  };
in
lib
