"""People (/people/): make assessors, reviewers, organisers and participant teams, change roles, hand out a new
password or sign-in link, issue and revoke API tokens; and the one-time sign-in link itself (/welcome/…).

A password, a link or a token key is shown once, on the answer to the POST that made it (never stored in
the clear, never put in a URL or a message that outlives the page).
"""

from django.contrib import messages
from django.contrib.auth import get_user_model, login
from django.contrib.auth.forms import SetPasswordForm
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from annotation.models import ApiToken, Campaign
from annotation.roles import Role
from annotation.services import people
from annotation.services.tokens import TokenError, revoke_token
from annotation.views.console.common import organisers_only
from annotation.views.console.forms import PersonForm, TokenForm
from config.ids import parse_id

User = get_user_model()


def _context(request, person_form=None, token_form=None, **extra):
    campaigns = list(Campaign.objects.order_by("name"))
    users = list(User.objects.filter(is_active=True).prefetch_related("groups").order_by("username"))
    for user in users:
        user.role_names = sorted(g.name for g in user.groups.all())
    return {
        "tab": "people", "users": users, "roles": [r for r in Role],
        "person_form": person_form or PersonForm(campaigns=campaigns),
        "token_form": token_form or TokenForm(campaigns=campaigns),
        "tokens": ApiToken.objects.active().select_related("user", "campaign").order_by("-created_at")[:200],
        **extra,
    }


def _link_url(request, link):
    return request.build_absolute_uri(reverse("annotation:welcome", args=list(link)))


@never_cache
@require_http_methods(["GET", "POST"])
@organisers_only
def people_page(request):
    """Everyone with their roles, the active API tokens, and the forms to add people and tokens."""
    if request.method == "GET":
        return render(request, "annotation/console/people.html", _context(request))
    action = request.POST.get("action")
    campaigns = list(Campaign.objects.order_by("name"))
    if action == "create":
        form = PersonForm(request.POST, campaigns=campaigns)
        if form.is_valid():
            data = form.cleaned_data
            reviewer_of = Campaign.objects.filter(name=data["reviewer_of"]).first() if data["reviewer_of"] else None
            try:
                made = people.create_person(username=data["username"], roles=data["roles"], sign_in=data["sign_in"],
                                            email=data["email"], reviewer_of=reviewer_of)
            except people.PersonInvalid as exc:
                form.add_service_error(exc.field, exc.message)
            else:
                shown = {"username": made.user.username, "password": made.password,
                         "link": _link_url(request, made.link) if made.link else None}
                return render(request, "annotation/console/people.html", _context(request, created=shown))
        return render(request, "annotation/console/people.html", _context(request, person_form=form), status=400)
    if action == "token":
        form = TokenForm(request.POST, campaigns=campaigns)
        if form.is_valid():
            data = form.cleaned_data
            campaign = Campaign.objects.filter(name=data["campaign"]).first() if data["campaign"] else None
            try:
                token, key = people.issue_api_token(name=data["name"], role=data["role"], campaign=campaign)
            except people.PersonInvalid as exc:
                form.add_service_error(exc.field, exc.message)
            else:
                return render(request, "annotation/console/people.html",
                              _context(request, issued={"token": token, "key": key}))
        return render(request, "annotation/console/people.html", _context(request, token_form=form), status=400)
    if action == "revoke":
        try:
            token = revoke_token(parse_id(request.POST.get("token", "")) or 0)
        except TokenError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, f"Token {token.prefix}… of {token.user.username} revoked.")
        return redirect("annotation:console_people")
    user = User.objects.filter(pk=parse_id(request.POST.get("user", "")) or 0, is_active=True).first()
    if user is None or action not in ("roles", "password", "link"):
        return render(request, "annotation/console/people.html",
                      _context(request, error="Choose a person and what to do."), status=400)
    if user.is_superuser and not request.user.is_superuser:
        return render(request, "annotation/console/people.html",
                      _context(request, error="Only a superuser changes a superuser."), status=400)
    if action == "roles":
        try:
            people.set_roles(user, request.POST.getlist("roles"))
        except people.PersonInvalid as exc:
            return render(request, "annotation/console/people.html", _context(request, error=exc.message), status=400)
        messages.success(request, f"{user.username}'s roles saved.")
        return redirect("annotation:console_people")
    if action == "password":
        shown = {"username": user.username, "password": people.new_password(user), "link": None}
    else:
        shown = {"username": user.username, "password": None, "link": _link_url(request, people.sign_in_link(user))}
    return render(request, "annotation/console/people.html", _context(request, created=shown))


@never_cache
@require_http_methods(["GET", "POST"])
def welcome(request, uidb64, token):
    """A one-time sign-in link: the person chooses a password and is signed in; the link then stops working."""
    user = people.user_of_link(uidb64, token)
    if user is None:
        raise Http404("This sign-in link is wrong, used or too old: ask your organiser for a new one.")
    form = SetPasswordForm(user, request.POST or None)
    if request.method == "POST" and form.is_valid():
        form.save()
        login(request, user, backend="config.auth.Backend")
        messages.success(request, "Your password is set; sign in with it next time.")
        return redirect("annotation:home")
    return render(request, "annotation/console/welcome.html", {"form": form, "person": user},
                  status=400 if request.method == "POST" else 200)
