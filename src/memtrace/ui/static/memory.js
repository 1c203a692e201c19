// The seq slider: moving it shows the session there; releasing it loads the state at that seq.
(function () {
  var slider = document.getElementById("seq"), number = document.getElementById("seq-number");
  var where = document.getElementById("session-at"), form = document.getElementById("seq-form");
  var sessions = JSON.parse(form.dataset.sessions || "[]");  // data, never script (the CSP allows none inline)
  function session(seq) {
    var label = "";
    sessions.forEach(function (s) { if (s.seq <= seq) label = s.label; });
    return label;
  }
  function show() { number.value = slider.value; where.textContent = session(+slider.value); }
  // Empty fields (no diff asked) are left out of the query rather than sent as "".
  function go() {
    form.querySelectorAll("input[name]").forEach(function (input) { input.disabled = input.value === ""; });
    form.submit();
  }
  slider.addEventListener("input", show);
  slider.addEventListener("change", function () { show(); go(); });
  form.addEventListener("submit", function (event) { event.preventDefault(); go(); });
  show();
})();
