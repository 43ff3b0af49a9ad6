// On formgrader's Manual Grading page: under the written answer, the instructor's rubric and
// the numbers this student answered about (their own table of Question 3), fetched from
// course_grading/written_guide.py. Every text goes in as text (textContent), never as HTML.
(function () {
  "use strict";
  var question = document.currentScript.getAttribute("data-question") || "";

  function el(tag, text, className) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) {
      node.textContent = String(text);
    }
    if (className) {
      node.className = className;
    }
    return node;
  }

  function scoreInput(question) {
    var inputs = document.querySelectorAll("input.score");
    for (var i = 0; i < inputs.length; i++) {
      if (inputs[i].id === question) {
        return inputs[i];
      }
    }
    return null;
  }

  function numbers(guide) {
    var box = el("div", null, "course-written-numbers");
    var t = guide.table;
    box.appendChild(el("h5", (guide.per_student ? "This student's own numbers" :
      "The class's numbers (one variant for everyone)") + " (variant " + guide.variant +
      "): the table of " + t.title + " as they saw it"));
    var table = el("table", null, "table table-condensed");
    var head = el("tr");
    t.header.forEach(function (h) {
      head.appendChild(el("th", h));
    });
    table.appendChild(el("thead")).appendChild(head);
    var body = table.appendChild(el("tbody"));
    t.rows.forEach(function (row) {
      var tr = el("tr");
      row.forEach(function (cell) {
        tr.appendChild(el("td", cell));
      });
      body.appendChild(tr);
    });
    box.appendChild(table);
    var notes = [];
    if (t.measured) {
      notes.push("Measured " + t.measured + ".");
    }
    if (t.scaled_column) {
      notes.push("Column " + t.scaled_column + " divides by sqrt(d_k).");
    }
    if (notes.length) {
      box.appendChild(el("p", notes.join(" ")));
    }
    return box;
  }

  function rubric(guide) {
    var box = el("div", null, "course-written-rubric");
    box.appendChild(el("h5", "Rubric (" + guide.points + " points)"));
    if (guide.rubric_missing) {
      box.appendChild(el("p", guide.rubric_missing, "alert alert-warning"));
      return box;
    }
    var list = el("ul");
    guide.rubric.forEach(function (item) {
      list.appendChild(el("li", item.points + " point" + (item.points === 1 ? "" : "s") +
        ": " + item.criterion));
    });
    box.appendChild(list);
    if (guide.model_answer) {
      box.appendChild(el("h5", "Model answer"));
      box.appendChild(el("p", guide.model_answer, "course-written-model"));
    }
    return box;
  }

  function show(guide) {
    var input = scoreInput(guide.question);
    if (!input || guide.question !== question) {
      return;
    }
    var cell = input.closest(".nbgrader_cell");
    var panel = el("div", null, "panel-body course-written-guide");
    panel.id = "course-written-guide";
    panel.appendChild(rubric(guide));
    panel.appendChild(numbers(guide));
    var body = cell ? cell.querySelector(".panel-body") : null;
    if (body) {
      body.parentNode.insertBefore(panel, body.nextSibling);
    }
  }

  function failed(message) {
    var input = scoreInput(question);
    var cell = input ? input.closest(".nbgrader_cell") : null;
    if (cell) {
      var note = el("div", "Rubric and numbers not shown: " + message,
        "panel-body alert alert-warning course-written-guide");
      note.id = "course-written-guide";
      cell.appendChild(note);
    }
  }

  // The server's XSRF token, read from its cookie as formgrader's own requests read it
  // (backbone_xsrf.js). Behind JupyterHub (4.1 and later) a script's request that carries
  // the login cookie without it is not logged in: the server sends it to the hub's login,
  // which sends it back, until the browser gives up ("Failed to fetch").
  function xsrfToken() {
    var found = document.cookie.match(/(?:^|;\s*)_xsrf=([^;]*)/);
    return found ? found[1] : null;
  }

  function load() {
    if (!window.submission_id || !window.base_url) {
      return;
    }
    var url = window.base_url + "/course-written/" + encodeURIComponent(window.submission_id);
    var headers = {"Accept": "application/json"};
    var token = xsrfToken();
    if (token) {
      headers["X-XSRFToken"] = token;
    }
    fetch(url, {credentials: "same-origin", headers: headers})
      .then(function (response) {
        var type = response.headers.get("Content-Type") || "";
        if (type.indexOf("application/json") !== 0) {
          throw new Error("HTTP " + response.status + " from " + response.url + " (not the " +
            "course's formgrader extension: is course_grading.formgrader_csp on?)");
        }
        return response.json().then(function (data) {
          if (!response.ok) {
            throw new Error(data.message || ("HTTP " + response.status));
          }
          return data;
        });
      })
      .then(show)
      .catch(function (error) {
        failed(error.message);
      });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", load);
  } else {
    load();
  }
})();
