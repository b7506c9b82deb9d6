# Completes command lines as a person typing each and then TAB would, through
# zsh's own completion system (compinit, _arguments), and prints for each
# "> LINE", the words offered (sorted, once each, one a line), and "error: "
# before each line the completion wrote on stderr. The completion function
# is the file _msglog in the working directory:
#
#   msglog completions zsh > _msglog && zsh -f complete.zsh 'msglog list -'
#
# zsh completes only in its line editor, which needs a terminal: a second
# zsh runs in a pseudo-terminal (zsh/zpty) and sources this file with
# --in-editor to set itself up.

if [[ $1 == --in-editor ]]; then
  PS1=''
  # No listing of the matches on the terminal: compadd below catches them.
  unsetopt auto_list list_ambiguous beep prompt_sp
  fpath=($PWD $fpath)
  autoload -U compinit && compinit -u -D
  # Every word offered passes compadd: keep those that match what is typed
  # (-O), then offer them as asked. A call that gathers into an array
  # itself (-O, -A, -D) is the completion system's own bookkeeping.
  compadd() {
    if (( ${@[(I)-[OAD]]} )); then builtin compadd "$@"; return; fi
    local -a offered
    builtin compadd -O offered "$@"
    (( $#offered )) && print -rl -- $offered >> offered
    builtin compadd "$@"
  }
  # TAB completes, then says so: END is never typed, so the echo of a line
  # cannot be taken for it.
  complete-and-tell() { zle complete-word; print -r -- $'\nEND' }
  zle -N complete-and-tell
  bindkey '^I' complete-and-tell
  exec 2>> errors
  return
fi

zmodload zsh/zpty || exit 2
zpty editor zsh -f -i
zpty -w editor "source ${(q)0:A} --in-editor"
for line; do
  : > offered
  : > errors
  # ^U empties the line the last TAB left.
  zpty -w -n editor $'\C-u'"$line"$'\t'
  zpty -r editor _ '*END*'
  print -r -- "> $line"
  sort -u offered
  sed 's/^/error: /' errors
done
zpty -d editor
rm -f offered errors
